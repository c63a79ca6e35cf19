// Readiness prober: pg_is_in_recovery()/transaction_read_only on PostgreSQL, a short-lived SET on
// Redis (and, in prod, its eviction policy), each under the probe deadline (the watchdog cuts a
// frozen store's socket), on a timer.
#include "actors/health_actor.hpp"

#include "persistence/drivers/redis_durability.hpp"

namespace seatflow::actors {
namespace {

// Empty when PostgreSQL is a writable primary, else why not.
std::string probe_pg(persistence::PgSession& pg, Readiness::Clock::time_point deadline) {
  const auto call = pg.watch_call(deadline);
  try {
    const auto state = persistence::read_primary_state(pg.connection());
    if (state.in_recovery) {
      return "postgresql is a standby (pg_is_in_recovery)";
    }
    if (state.read_only) {
      return "postgresql is read-only (transaction_read_only)";
    }
    return {};
  } catch (const std::exception& error) {
    pg.reset();
    return std::string("postgresql unreachable: ") + error.what();
  }
}

// Empty when Redis takes a write (and, when `require_noeviction`, evicts nothing), else why not.
// A Redis that answers PING but refuses writes (OOM under noeviction, READONLY, MISCONF) would
// fail every callback's seat script: not ready (SPEC §14).
std::string probe_redis(persistence::RedisClient& redis, Readiness::Clock::time_point deadline,
                        bool require_noeviction) {
  using persistence::RedisWriteProbe;
  const auto call = redis.watch_call(deadline);
  const auto write =
      persistence::probe_redis_write(redis, std::to_string(deadline.time_since_epoch().count()));
  if (write.kind == RedisWriteProbe::Kind::unreachable) {
    return "redis unreachable";
  }
  if (write.kind == RedisWriteProbe::Kind::refused) {
    return "redis refuses writes: " + write.detail;
  }
  if (!require_noeviction) {
    return {};
  }
  const auto policy = persistence::read_eviction_policy(redis);
  using Kind = persistence::EvictionPolicy::Kind;
  if (policy.kind == Kind::evicting) {
    return "redis maxmemory-policy is " + policy.detail + ", not noeviction";
  }
  if (policy.kind != Kind::noeviction) {
    return "redis maxmemory-policy unreadable: " + policy.detail;
  }
  return {};
}

// One line, short: libpq messages end with newlines and may run long.
std::string one_line(std::string text) {
  constexpr std::size_t kReasonBytesMax = 200;
  for (auto& c : text) {
    if (c == '\n' || c == '\r') {
      c = ' ';
    }
  }
  if (text.size() > kReasonBytesMax) {
    text.resize(kReasonBytesMax);
  }
  while (!text.empty() && text.back() == ' ') {
    text.pop_back();
  }
  return text;
}

void probe_once(HealthState& st, const ProberSettings& prober, Readiness& readiness) {
  const auto bound = std::chrono::milliseconds(prober.probe_ms_max);
  auto now = Readiness::Clock::now();
  readiness.probe_started("postgresql", now);
  auto reason = probe_pg(*st.pg, now + bound);
  now = Readiness::Clock::now();
  readiness.probe_started("redis", now);
  const auto redis = probe_redis(*st.redis, now + bound, prober.require_noeviction);
  if (!redis.empty()) {
    reason += reason.empty() ? redis : "; " + redis;
  }
  readiness.publish({reason.empty(), one_line(std::move(reason))});
}

}  // namespace

HealthActor::behavior_type health_actor(HealthActor::stateful_pointer<HealthState> self,
                                        StoreSettings settings, ProberSettings prober,
                                        std::shared_ptr<Readiness> readiness) {
  auto& st = self->state;
  // No failpoints: readiness reports the stores, not the faults injected into the callback path.
  settings.failpoints = nullptr;
  settings.redis_timeout_ms = prober.probe_ms_max;
  settings.pg.connect_ms_max = std::min(settings.pg.connect_ms_max, prober.probe_ms_max);
  st.pg = open_pg(settings);
  st.redis = open_redis(settings);
  self->send(self, probe_atom::value);
  return {
      [self, prober, readiness](probe_atom) {
        probe_once(self->state, prober, *readiness);
        self->delayed_send(self, std::chrono::milliseconds(prober.interval_ms), probe_atom::value);
      },
  };
}

}  // namespace seatflow::actors

// Health actor: SELECT 1 on PostgreSQL and PING on Redis, with a short result cache.
#include "actors/health_actor.hpp"

#include "persistence/sql.hpp"

namespace seatflow::actors {
namespace {

constexpr auto kProbeCacheTime = std::chrono::milliseconds(250);

void refresh(HealthState& st) {
  st.ready = true;
  st.reason.clear();
  try {
    pqxx::nontransaction tx(st.pg->connection());
    tx.exec_prepared(std::string(persistence::sql::kPing));
  } catch (const std::exception&) {
    st.pg->reset();
    st.ready = false;
    st.reason = "postgresql unreachable";
  }
  if (!st.redis->ping()) {
    st.ready = false;
    st.reason += st.reason.empty() ? "redis unreachable" : "; redis unreachable";
  }
  st.checked_at = std::chrono::steady_clock::now();
}

}  // namespace

caf::behavior health_actor(caf::stateful_actor<HealthState>* self, StoreSettings settings) {
  auto& st = self->state;
  // Probes must answer quickly even when a store hangs: short timeouts, no failpoints.
  st.pg = std::make_unique<persistence::PgSession>(settings.pg_dsn, 1'000, nullptr);
  st.redis = std::make_unique<persistence::RedisClient>(settings.redis, 1'000, nullptr);
  return {
      [self](ReadyProbe& probe) {
        auto& st = self->state;
        if (std::chrono::steady_clock::now() - st.checked_at > kProbeCacheTime) {
          refresh(st);
        }
        probe.reply(st.ready, st.reason);
      },
  };
}

}  // namespace seatflow::actors

// `seatflow serve`: the only place that wires the parts of a serving engine together.
#include "app/serve.hpp"
#include "app/store_checks.hpp"

#include <pqxx/pqxx>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "app/gateways.hpp"
#include "app/log.hpp"
#include "channels/registry.hpp"
#include "http/handlers.hpp"
#include "http/server.hpp"
#include "http/status.hpp"
#include "observability/logger.hpp"
#include "observability/registry.hpp"
#include "persistence/drivers/failpoints.hpp"
#include "persistence/drivers/pg_limits.hpp"
#include "persistence/jobs/event_relay.hpp"
#include "persistence/jobs/reconciler.hpp"

namespace seatflow::app {
namespace {

// How long a graceful stop waits for callbacks already accepted to reach their commit (at most
// half of SEATFLOW_SHUTDOWN_TIMEOUT_MS, so the engine's own stop fits in the rest).
constexpr auto kDrainTimeout = std::chrono::milliseconds(10'000);
// Kept at the end of the stop bound for the HTTP server's stop and the exit itself.
constexpr auto kExitReserve = std::chrono::milliseconds(1'000);
// The exit code when the stop bound passed before the graceful stop finished.
constexpr int kForcedStopExitCode = 3;
// The exit code after a core actor died (the supervisor raised the stop).
constexpr int kCoreActorDiedExitCode = 4;

// The last resort of a stop: ends the process at `deadline` unless destroyed before (the graceful
// stop finished). A callback not committed by then is never ACKed: its connection dies with the
// process.
class StopGuard {
 public:
  explicit StopGuard(std::chrono::steady_clock::time_point deadline)
      : thread_([this, deadline] {
          std::unique_lock lock(mutex_);
          if (!wake_.wait_until(lock, deadline, [this] { return done_; })) {
            constexpr std::string_view kLine =
                "event=stop_forced message=\"the graceful stop outlived "
                "SEATFLOW_SHUTDOWN_TIMEOUT_MS\"\n";
            // No logger here: it might be what blocks. write(2) is async-signal-safe.
            [[maybe_unused]] const auto written = ::write(2, kLine.data(), kLine.size());
            std::_Exit(kForcedStopExitCode);
          }
        }) {}
  ~StopGuard() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  StopGuard(const StopGuard&) = delete;
  StopGuard& operator=(const StopGuard&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// The engine's runtime parts beside the settings as parsed.
struct EngineParts {
  persistence::Failpoints* failpoints = nullptr;
  persistence::ReconcileProbe* reconcile_probe = nullptr;
  observability::Registry* metrics = nullptr;
  GatewayDialects dialects;
  std::vector<actors::ExtraActor> extra_actors;
};

actors::EngineSettings engine_settings(const Config& config, EngineParts parts) {
  // The actors' settings as parsed; what follows are the runtime parts.
  actors::EngineSettings settings = config.engine;
  settings.store.pg_dsn = config.pg_dsn;
  settings.store.redis = redis_endpoint(config);
  settings.store.failpoints = parts.failpoints;
  settings.store.callback_status = &http::callback_status;
  settings.reconciler.counters = parts.reconcile_probe;
  settings.metrics = parts.metrics;
  settings.query_dialects = std::move(parts.dialects.query);
  settings.payment_dialects = std::move(parts.dialects.payment);
  settings.refund_dialects = std::move(parts.dialects.refund);
  settings.bill_dialects = std::move(parts.dialects.bill);
  settings.extra_actors = std::move(parts.extra_actors);
  // A dead core actor stops the process the way SIGTERM does (the supervisor logged it); serve
  // then exits non-zero.
  settings.on_core_down = [](const std::string&, const std::string&) {
    ::kill(::getpid(), SIGTERM);
  };
  return settings;
}

void wait_for_stop_signal(const sigset_t& signals) {
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  logger().info("event=stopping signal={}", signal_number);
}

// The bounded stop: no new connections, the requests in flight drained for a while, then the
// engine (its pending replies hold the server's sessions) and the server, all within `bound`.
void stop_serving(std::chrono::milliseconds bound, http::HttpServer& server,
                  const http::ApiHandler& handler, actors::Engine& engine) {
  const auto stop_started = std::chrono::steady_clock::now();
  const StopGuard guard(stop_started + bound);
  server.stop_accepting();
  const auto drain_deadline = stop_started + std::min(kDrainTimeout, bound / 2);
  while (handler.inflight() > 0 && std::chrono::steady_clock::now() < drain_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  engine.shutdown(stop_started + bound - kExitReserve);
  server.stop();
  logger().info("event=stopped inflight_dropped={} stop_ms={}", handler.inflight(),
                std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - stop_started)
                    .count());
}

// The payment events need wal_level=logical and their slot (created here when missing, never
// replaced when invalidated: the relay reports that). False, after one error line, when the engine
// must not start; an unreachable PostgreSQL is left to the readiness probe, as ever.
bool check_event_slot(const Config& config) {
  const auto& slot = config.engine.event_relay.relay.slot;
  try {
    pqxx::connection conn(
        persistence::with_connection_defaults(config.pg_dsn, config.engine.store.pg));
    std::string level;
    switch (persistence::ensure_event_slot(conn, slot, &level)) {
      case persistence::SlotCheck::not_logical:
        logger().error(wal_level_refusal(level));
        return false;
      case persistence::SlotCheck::foreign:
        logger().error(
            "event=startup_refused setting=SEATFLOW_EVENT_SLOT value={} message=\"the replication "
            "slot belongs to another database of the server: give each database its own\"",
            slot);
        return false;
      case persistence::SlotCheck::created:
        logger().warn("event=event_slot_created slot={}", slot);
        break;
      case persistence::SlotCheck::lost:
      case persistence::SlotCheck::ready:
        break;
    }
    // The slot the engine reads is the one its statements check (an older schema has no record
    // yet: `seatflow migrate` makes it).
    (void)persistence::bind_event_slot(conn, slot);
    return true;
  } catch (const std::exception&) {
    logger().warn("event=event_slot_check_skipped reason=pg_unavailable slot={}", slot);
  }
  return true;
}

// The warnings a start with test-only settings gets.
void warn_of_test_settings(const Config& config) {
  if (!config.failpoints.empty()) {
    logger().warn("event=failpoints_armed spec={}", observability::quoted_value(config.failpoints));
  }
  if (config.callback_secrets.front() == kDevCallbackSecret) {
    logger().warn("event=dev_secret message=\"signing with the dev-only callback secret\"");
  }
}

// The HTTP front over a running engine, from the start of the server to the end of the stop.
int serve_http(const Config& config, const sigset_t& signals, actors::Engine& engine,
               const channels::Registry& registry, http::HttpProbe& http_probe,
               observability::Registry& metrics, const std::optional<ServeExtension>& extension,
               const std::string& channel_names) {
  auto api = config.api;
  api.auth = {config.api_token, config.api_jwt_key, config.api_jwt_lifetime_ms_max / 1000};
  http::ApiHandler handler(
      config.http, api, engine, registry, http_probe, metrics,
      extension && extension->routes ? extension->routes(engine) : http::ExtraRoutes{});
  http::HttpServer server(config.http, handler, http_probe);
  handler.attach_server(&server);
  if (const auto error = server.start(); !error.empty()) {
    std::cerr << "seatflow: " << error << '\n';
    engine.shutdown();
    return 1;
  }
  if (extension && extension->listening) {
    extension->listening(engine, config.http.host, server.port());
  }
  logger().info("event=serving addr={}:{} profile={} channels={}", config.http.host, server.port(),
                config.profile == Profile::dev ? "dev" : "prod", channel_names);

  wait_for_stop_signal(signals);
  stop_serving(std::chrono::milliseconds(config.shutdown_ms_max), server, handler, engine);
  return engine.core_actor_died() ? kCoreActorDiedExitCode : 0;
}

}  // namespace

int run_serve(const CliOverrides& overrides, const ServeExtender& extend) {
  const auto config = load_for_command(overrides, true);
  if (!config) {
    return 2;
  }
  // Block the stop signals before any thread starts, so only sigwait receives them.
  const sigset_t signals = block_stop_signals();
  std::signal(SIGPIPE, SIG_IGN);
  observability::init_logging(config->log_level);
  auto failpoints = persistence::Failpoints::parse(config->failpoints);
  warn_of_test_settings(*config);
  if (!check_event_slot(*config) || !check_redis_eviction(*config)) {
    return 2;
  }
  channels::Registry registry;
  std::string channel_names;
  if (!add_channels(*config, registry, channel_names)) {
    return 2;
  }
  auto extension = extend ? extend(*config) : std::nullopt;
  // The one metrics registry: each module registers its probe in it; it outlives them all.
  observability::Registry metrics;
  const persistence::FailpointProbe failpoint_probe(metrics, &failpoints.value());
  persistence::ReconcileProbe reconcile_probe(metrics);
  http::HttpProbe http_probe(metrics);
  std::unique_ptr<actors::Engine> engine;
  try {
    engine = std::make_unique<actors::Engine>(engine_settings(
        *config,
        {&failpoints.value(), &reconcile_probe, &metrics, gateway_dialects(*config, registry),
         extension ? extension->actors : std::vector<actors::ExtraActor>{}}));
  } catch (const std::exception& error) {
    // The active query's trust store (SEATFLOW_QUERY_CA_FILE) or a query key could not be loaded.
    std::cerr << "seatflow: configuration error: " << error.what() << '\n';
    return 2;
  }
  return serve_http(*config, signals, *engine, registry, http_probe, metrics, extension,
                    channel_names);
}

}  // namespace seatflow::app

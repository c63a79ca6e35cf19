// SeatFlow command line: the only place that reads configuration and wires the parts together.
#include <CLI/CLI.hpp>
#include <caf/config.hpp>
#include <pqxx/pqxx>

#include <unistd.h>

#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>

#include "actors/engine.hpp"
#include "actors/payment_querier.hpp"
#include "app/config.hpp"
#include "app/events_tail.hpp"
#include "app/gateway_sign.hpp"
#include "app/log.hpp"
#include "app/store_checks.hpp"
#include "channels/alipay_channel.hpp"
#include "channels/alipay_query.hpp"
#include "channels/alipay_refund.hpp"
#include "channels/crypto.hpp"
#include "channels/hmac_channel.hpp"
#include "channels/hmac_query.hpp"
#include "channels/hmac_refund.hpp"
#include "channels/registry.hpp"
#include "channels/standard_channel.hpp"
#include "channels/stripe_channel.hpp"
#include "channels/wechat_channel.hpp"
#include "channels/wechat_query.hpp"
#include "channels/wechat_refund.hpp"
#include "domain/clock.hpp"
#include "http/handlers.hpp"
#include "http/server.hpp"
#include "http/status.hpp"
#include "net/http_client.hpp"
#include "observability/logger.hpp"
#include "observability/registry.hpp"
#include "persistence/callback_store.hpp"
#include "persistence/checker.hpp"
#include "persistence/event_relay.hpp"
#include "persistence/migrations.hpp"
#include "persistence/query_store.hpp"
#include "persistence/reconciler.hpp"

#ifdef SEATFLOW_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace {

using seatflow::app::Config;

// The allocator serving malloc: "mimalloc <version>" when a probe allocation made with malloc lies
// in mimalloc's heap (linked but not serving, e.g. interposed by a preloaded library, is
// "default"), else "default".
std::string allocator_name() {
#ifdef SEATFLOW_WITH_MIMALLOC
  void* volatile probe = std::malloc(64);
  const bool served = mi_is_in_heap_region(probe);
  std::free(probe);
  if (served) {
    const int version = mi_version();
    return "mimalloc " + std::to_string(version / 100) + '.' + std::to_string(version / 10 % 10) +
           '.' + std::to_string(version % 10);
  }
#endif
  return "default";
}

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

struct CliOverrides {
  std::map<std::string, std::string> values;  // SEATFLOW_* name → value from a flag
};

seatflow::app::SettingLookup make_lookup(const CliOverrides& overrides) {
  return [&overrides](const std::string& name) -> std::optional<std::string> {
    if (const auto it = overrides.values.find(name); it != overrides.values.end()) {
      return it->second;
    }
    if (const char* value = std::getenv(name.c_str())) {
      return std::string(value);
    }
    return std::nullopt;
  };
}

std::optional<Config> load(const CliOverrides& overrides, bool require_stores) {
  auto result = seatflow::app::load_config(make_lookup(overrides), require_stores);
  if (!result.config) {
    std::cerr << "seatflow: configuration error: " << result.error << '\n';
  }
  return result.config;
}

// The line that refuses a PostgreSQL whose WAL carries no logical decoding information.
std::string wal_level_refusal(const std::string& level) {
  return "event=startup_refused setting=wal_level value=" + level +
         " required=logical message=\"SeatFlow reads its payment events from the WAL: set "
         "wal_level = logical in postgresql.conf and restart PostgreSQL\"";
}

int run_migrate(const CliOverrides& overrides) {
  const auto config = load(overrides, false);
  if (!config) {
    return 2;
  }
  if (config->pg_dsn.empty()) {
    std::cerr << "seatflow: configuration error: SEATFLOW_PG_DSN is not set\n";
    return 2;
  }
  try {
    pqxx::connection conn(
        seatflow::persistence::with_connection_defaults(config->pg_dsn, config->engine.store.pg));
    // The slot first: without wal_level=logical nothing is applied.
    std::string level;
    const auto& slot = config->engine.event_relay.relay.slot;
    const auto check = seatflow::persistence::ensure_event_slot(conn, slot, &level);
    if (check == seatflow::persistence::SlotCheck::not_logical) {
      std::cerr << "seatflow: migrate refused: " << wal_level_refusal(level) << '\n';
      return 1;
    }
    if (check == seatflow::persistence::SlotCheck::foreign) {
      std::cerr << "seatflow: migrate refused: the replication slot " << slot
                << " belongs to another database; name this database's slot with "
                   "SEATFLOW_EVENT_SLOT\n";
      return 1;
    }
    if (check == seatflow::persistence::SlotCheck::lost) {
      std::cerr << "seatflow: warning: the event slot " << slot
                << " was invalidated (wal_status=lost); it is left as it is "
                   "(docs/RELIABILITY.md)\n";
    }
    if (check == seatflow::persistence::SlotCheck::created) {
      std::cout << "event slot " << slot << " created\n";
    }
    const auto report = seatflow::persistence::apply_migrations(conn);
    (void)seatflow::persistence::bind_event_slot(conn, slot);
    if (report.applied.empty()) {
      std::cout << "schema is at version " << report.to_version << "; nothing to apply\n";
    } else {
      std::cout << "schema migrated from version " << report.from_version << " to "
                << report.to_version << " (" << report.applied.size() << " applied)\n";
    }
    for (const auto& note : report.notes) {
      std::cout << note << '\n';
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "seatflow: migrate failed: " << e.what() << '\n';
    return 1;
  }
}

// The query (SPEC §10) and refund (SPEC §12) dialects of the channels whose gateway URL is
// configured: both speak to the same gateway with the same keys.
struct GatewayDialects {
  std::vector<std::shared_ptr<const seatflow::channels::QueryDialect>> query;
  std::vector<std::shared_ptr<const seatflow::channels::RefundDialect>> refund;
};

// The dev mock gateway's settings as parsed, with the dialects' secrets it signs with: the engine's
// mock gateway actor and the API's mock-gateway endpoints get the same.
seatflow::actors::MockGatewaySettings mock_gateway_settings(const Config& config) {
  auto mock = config.engine.mock_gateway;
  mock.secrets = config.callback_secrets;
  mock.stripe = config.stripe;
  mock.standard = config.standard;
  mock.currency = config.currency;
  return mock;
}

seatflow::actors::EngineSettings engine_settings(
    const Config& config, seatflow::persistence::Failpoints* failpoints,
    seatflow::persistence::ReconcileProbe* reconcile_probe,
    seatflow::observability::Registry* metrics, GatewayDialects dialects) {
  std::string why;
  // The actors' settings as parsed; what follows are the runtime parts.
  seatflow::actors::EngineSettings settings = config.engine;
  settings.store.pg_dsn = config.pg_dsn;
  settings.store.redis = *seatflow::persistence::parse_redis_url(config.redis_url, &why);
  settings.store.failpoints = failpoints;
  settings.store.callback_status = &seatflow::http::callback_status;
  settings.mock_gateway = mock_gateway_settings(config);
  settings.reconciler.counters = reconcile_probe;
  settings.metrics = metrics;
  settings.query_dialects = std::move(dialects.query);
  settings.refund_dialects = std::move(dialects.refund);
  // A dead core actor stops the process the way SIGTERM does (the supervisor logged it); serve
  // then exits non-zero.
  settings.on_core_down = [](const std::string&, const std::string&) {
    ::kill(::getpid(), SIGTERM);
  };
  return settings;
}

// Blocks SIGINT and SIGTERM in this thread and every thread started after it, so that only an
// explicit sigwait/sigtimedwait on the returned set receives them.
sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

void wait_for_stop_signal(const sigset_t& signals) {
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  seatflow::app::logger().info("event=stopping signal={}", signal_number);
}

// Adds the configured alipay/wechat/stripe/standard channels and appends their names to `names`.
// The key files were checked while the configuration loaded; false (after one line on stderr) only
// when one changed since.
// The dialects of the channels whose gateway URL is configured.
GatewayDialects gateway_dialects(const Config& config,
                                 const seatflow::channels::Registry& registry) {
  GatewayDialects dialects;
  auto& out = dialects.query;
  if (!config.query.hmac_gateway_url.empty()) {
    std::string why;
    const auto url = seatflow::net::parse_url(config.query.hmac_gateway_url, &why);
    const auto* hmac = dynamic_cast<const seatflow::channels::HmacChannel*>(
        registry.find(seatflow::domain::Channel::hmac));
    if (url && hmac != nullptr) {
      out.push_back(std::make_shared<seatflow::channels::HmacQuery>(*hmac, *url));
      dialects.refund.push_back(std::make_shared<seatflow::channels::HmacRefund>(
          seatflow::channels::HmacConfig{config.callback_secrets, config.callback_window_ms},
          *url));
    }
  }
  // The key files were checked by the configuration; a failure here is a start-up error.
  const auto load_private = [](const std::string& path) {
    std::string why;
    auto key = seatflow::channels::load_private_key_file(path, &why);
    if (!key) {
      throw std::runtime_error(path + ": " + why);
    }
    return key;
  };
  const auto& query = config.query;
  if (!query.alipay_gateway_url.empty() && config.alipay) {
    std::string why;
    auto public_key =
        seatflow::channels::load_public_key_file(config.alipay->public_key_path, &why);
    if (!public_key) {
      throw std::runtime_error(config.alipay->public_key_path + ": " + why);
    }
    const seatflow::channels::AlipayQueryConfig alipay{
        config.alipay->app_id, *seatflow::net::parse_url(query.alipay_gateway_url, &why),
        load_private(query.alipay_app_private_key_path), std::move(public_key)};
    out.push_back(std::make_shared<seatflow::channels::AlipayQuery>(alipay));
    dialects.refund.push_back(std::make_shared<seatflow::channels::AlipayRefund>(alipay));
  }
  if (!query.wechat_gateway_url.empty() && config.wechat) {
    std::string why;
    seatflow::channels::WechatPlatformKeys platform;
    for (const auto& entry : config.wechat->platform_keys) {
      auto key = seatflow::channels::load_public_key_file(entry.pem_path, &why);
      if (!key) {
        throw std::runtime_error(entry.pem_path + ": " + why);
      }
      platform.emplace_back(entry.serial, std::move(key));
    }
    seatflow::channels::WechatQueryConfig wechat;
    wechat.mchid = config.wechat->mchid;
    wechat.gateway = *seatflow::net::parse_url(query.wechat_gateway_url, &why);
    wechat.merchant_private_key = load_private(query.wechat_merchant_key_path);
    wechat.merchant_serial = query.wechat_merchant_serial;
    wechat.platform_keys = std::move(platform);
    wechat.window_ms = config.callback_window_ms;
    out.push_back(std::make_shared<seatflow::channels::WechatQuery>(wechat));
    dialects.refund.push_back(
        std::make_shared<seatflow::channels::WechatRefund>(std::move(wechat)));
  }
  return dialects;
}

bool add_gateway_channels(const Config& config, seatflow::channels::Registry& registry,
                          std::string& names) {
  std::string why;
  if (config.alipay) {
    auto alipay = seatflow::channels::make_alipay_channel(*config.alipay, &why);
    if (!alipay) {
      std::cerr << "seatflow: configuration error: SEATFLOW_ALIPAY_PUBLIC_KEY: " << why << '\n';
      return false;
    }
    registry.add(std::move(alipay));
    names += ",alipay";
  }
  if (config.wechat) {
    auto wechat = seatflow::channels::make_wechat_channel(*config.wechat, &why);
    if (!wechat) {
      std::cerr << "seatflow: configuration error: SEATFLOW_WECHAT_PLATFORM_KEYS: " << why << '\n';
      return false;
    }
    registry.add(std::move(wechat));
    names += ",wechat";
  }
  // The secrets were validated while the configuration loaded; a constructor that still throws
  // is a wiring bug, and main reports it like any start-up failure.
  if (config.stripe) {
    registry.add(std::make_unique<seatflow::channels::StripeChannel>(*config.stripe));
    names += ",stripe";
  }
  if (config.standard) {
    registry.add(std::make_unique<seatflow::channels::StandardChannel>(*config.standard));
    names += ",standard";
  }
  return true;
}

// The bounded stop: no new connections, the requests in flight drained for a while, then the
// engine (its pending replies hold the server's sessions) and the server, all within `bound`.
void stop_serving(std::chrono::milliseconds bound, seatflow::http::HttpServer& server,
                  const seatflow::http::ApiHandler& handler, seatflow::actors::Engine& engine) {
  const auto stop_started = std::chrono::steady_clock::now();
  const StopGuard guard(stop_started + bound);
  server.stop_accepting();
  const auto drain_deadline = stop_started + std::min(kDrainTimeout, bound / 2);
  while (handler.inflight() > 0 && std::chrono::steady_clock::now() < drain_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  engine.shutdown(stop_started + bound - kExitReserve);
  server.stop();
  seatflow::app::logger().info("event=stopped inflight_dropped={} stop_ms={}", handler.inflight(),
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
        seatflow::persistence::with_connection_defaults(config.pg_dsn, config.engine.store.pg));
    std::string level;
    switch (seatflow::persistence::ensure_event_slot(conn, slot, &level)) {
      case seatflow::persistence::SlotCheck::not_logical:
        seatflow::app::logger().error(wal_level_refusal(level));
        return false;
      case seatflow::persistence::SlotCheck::foreign:
        seatflow::app::logger().error(
            "event=startup_refused setting=SEATFLOW_EVENT_SLOT value={} message=\"the replication "
            "slot belongs to another database of the server: give each database its own\"",
            slot);
        return false;
      case seatflow::persistence::SlotCheck::created:
        seatflow::app::logger().warn("event=event_slot_created slot={}", slot);
        break;
      case seatflow::persistence::SlotCheck::lost:
      case seatflow::persistence::SlotCheck::ready:
        break;
    }
    // The slot the engine reads is the one its statements check (an older schema has no record
    // yet: `seatflow migrate` makes it).
    (void)seatflow::persistence::bind_event_slot(conn, slot);
    return true;
  } catch (const std::exception&) {
    seatflow::app::logger().warn("event=event_slot_check_skipped reason=pg_unavailable slot={}",
                                 slot);
  }
  return true;
}

int run_serve(const CliOverrides& overrides) {
  const auto config = load(overrides, true);
  if (!config) {
    return 2;
  }
  // Block the stop signals before any thread starts, so only sigwait below receives them.
  const sigset_t signals = block_stop_signals();
  std::signal(SIGPIPE, SIG_IGN);

  seatflow::observability::init_logging(config->log_level);
  std::string why;
  auto failpoints = seatflow::persistence::Failpoints::parse(config->failpoints, &why);
  if (!config->failpoints.empty()) {
    seatflow::app::logger().warn("event=failpoints_armed spec={}",
                                 seatflow::observability::quoted_value(config->failpoints));
  }
  if (config->callback_secrets.front() == seatflow::app::kDevCallbackSecret) {
    seatflow::app::logger().warn(
        "event=dev_secret message=\"signing with the dev-only callback secret\"");
  }

  if (!check_event_slot(*config) || !seatflow::app::check_redis_eviction(*config)) {
    return 2;
  }

  seatflow::channels::Registry registry;
  registry.add(std::make_unique<seatflow::channels::HmacChannel>(
      seatflow::channels::HmacConfig{config->callback_secrets, config->callback_window_ms}));
  std::string channel_names = "hmac";
  if (!add_gateway_channels(*config, registry, channel_names)) {
    return 2;
  }

  // The one metrics registry: each module registers its probe in it; it outlives them all.
  seatflow::observability::Registry metrics;
  const seatflow::persistence::FailpointProbe failpoint_probe(metrics, &*failpoints);
  seatflow::persistence::ReconcileProbe reconcile_probe(metrics);
  seatflow::http::HttpProbe http_probe(metrics);
  std::unique_ptr<seatflow::actors::Engine> engine_owner;
  try {
    engine_owner = std::make_unique<seatflow::actors::Engine>(engine_settings(
        *config, &*failpoints, &reconcile_probe, &metrics, gateway_dialects(*config, registry)));
  } catch (const std::exception& error) {
    // The active query's trust store (SEATFLOW_QUERY_CA_FILE) or a query key could not be loaded.
    std::cerr << "seatflow: configuration error: " << error.what() << '\n';
    return 2;
  }
  auto& engine = *engine_owner;
  auto api = config->api;
  api.auth = {config->api_token, config->api_jwt_key, config->api_jwt_lifetime_ms_max / 1000};
  api.mock_gateway = mock_gateway_settings(*config);
  api.callback_window_ms = config->callback_window_ms;
  seatflow::http::ApiHandler handler(config->http, api, engine, registry, http_probe, metrics);
  seatflow::http::HttpServer server(config->http, handler, http_probe);
  handler.attach_server(&server);
  if (const auto error = server.start(); !error.empty()) {
    std::cerr << "seatflow: " << error << '\n';
    engine.shutdown();
    return 1;
  }
  // The mock gateway reaches the engine the way a gateway would: over HTTP, on loopback when the
  // engine listens on every interface.
  engine.set_mock_target(config->http.host == "0.0.0.0" ? "127.0.0.1" : config->http.host,
                         server.port());
  seatflow::app::logger().info(
      "event=serving addr={}:{} profile={} channels={}", config->http.host, server.port(),
      config->profile == seatflow::app::Profile::dev ? "dev" : "prod", channel_names);

  wait_for_stop_signal(signals);
  stop_serving(std::chrono::milliseconds(config->shutdown_ms_max), server, handler, engine);
  return engine.core_actor_died() ? kCoreActorDiedExitCode : 0;
}

struct RepairOptions {
  bool once = false;
  std::size_t batch = 0;  // 0: SEATFLOW_RECONCILE_BATCH
  std::string scope_prefix;
};

// A live Redis client for the command-line tools (no failpoints).
std::unique_ptr<seatflow::persistence::RedisClient> tool_redis(const Config& config) {
  std::string why;
  return std::make_unique<seatflow::persistence::RedisClient>(
      *seatflow::persistence::parse_redis_url(config.redis_url, &why),
      config.engine.store.redis_timeout_ms, nullptr);
}

void print_reconcile(const seatflow::persistence::ReconcileStats& stats) {
  std::cout << "reconcile: orders_scanned=" << stats.orders_scanned
            << " orders_repaired=" << stats.orders_repaired << " seats_sold=" << stats.seats_sold
            << " seats_released=" << stats.seats_released
            << " seats_relocked=" << stats.seats_relocked
            << " seat_conflicts=" << stats.seat_conflicts
            << " pending_conflicts=" << stats.pending_conflicts << " errors=" << stats.errors
            << '\n'
            << std::flush;
}

// `seatflow reconcile [--once]`: one pass and a summary, or a pass every interval until a signal.
int run_reconcile(const CliOverrides& overrides, const RepairOptions& options) {
  const auto config = load(overrides, true);
  if (!config) {
    return 2;
  }
  const sigset_t signals = block_stop_signals();
  seatflow::observability::init_logging(config->log_level);
  seatflow::persistence::PgSession pg(config->pg_dsn, config->engine.store.pg, nullptr, nullptr);
  auto redis = tool_redis(*config);
  seatflow::persistence::ReconcileOptions reconcile;
  reconcile.batch = options.batch > 0 ? options.batch : config->engine.reconciler.batch;
  reconcile.scope_prefix = options.scope_prefix;
  seatflow::persistence::Reconciler reconciler(pg, *redis, reconcile, nullptr);
  // Looping with the engine's setting turned off still needs a period: one minute.
  constexpr std::uint32_t kDefaultLoopMs = 60'000;
  const auto interval_ms = config->engine.reconciler.interval_ms > 0
                               ? config->engine.reconciler.interval_ms
                               : kDefaultLoopMs;
  for (;;) {
    const auto stats = reconciler.run_pass();
    print_reconcile(stats);
    if (options.once) {
      if (stats.errors > 0) {
        std::cerr << "seatflow: reconcile stopped early: " << stats.last_error << '\n';
        return 2;
      }
      return 0;
    }
    const timespec wait{static_cast<time_t>(interval_ms / 1000),
                        static_cast<long>(interval_ms % 1000) * 1'000'000L};
    if (sigtimedwait(&signals, nullptr, &wait) > 0) {
      return 0;
    }
  }
}

// `seatflow check`: one line per violation, a summary; exit 1 with violations, 2 on store errors.
// `seatflow query <paymentNo>` (SPEC §10): asks the payment's gateway now and applies a paid or
// failed answer through the executor directly (its row locks serialise it with a running engine,
// as `reconcile` does). Exit 0 when the gateway answered, 1 for an unknown payment or a payment
// whose channel has no query dialect, 2 for a configuration or store error, 3 when the gateway did
// not answer or its answer was refused.
int run_query(const CliOverrides& overrides, const std::string& payment_no) {
  const auto config = load(overrides, true);
  if (!config) {
    return 2;
  }
  seatflow::observability::init_logging(config->log_level);
  try {
    seatflow::channels::Registry registry;
    registry.add(std::make_unique<seatflow::channels::HmacChannel>(
        seatflow::channels::HmacConfig{config->callback_secrets, config->callback_window_ms}));
    std::string channel_names;
    if (!add_gateway_channels(*config, registry, channel_names)) {
      return 2;
    }
    seatflow::persistence::PgSession pg(config->pg_dsn, config->engine.store.pg, nullptr, nullptr);
    auto redis = tool_redis(*config);
    seatflow::persistence::SeatStore seats(*redis);
    seatflow::persistence::CallbackStore callbacks(pg, seats, nullptr,
                                                   &seatflow::http::callback_status);
    seatflow::persistence::QueryStore queries(pg);
    const auto payment = queries.load(payment_no);
    if (!payment) {
      std::cerr << "seatflow: unknown payment " << payment_no << '\n';
      return 1;
    }
    // The tool serves no /metrics; its querier's probe registers in a registry of its own.
    seatflow::observability::Registry metrics;
    seatflow::actors::PaymentQuerier querier(
        gateway_dialects(*config, registry).query,
        std::make_unique<seatflow::net::HttpClient>(config->engine.query_client,
                                                    config->engine.query_ca_file),
        [&callbacks](seatflow::domain::VerifiedCallback callback, seatflow::actors::ReplyFn reply) {
          reply(callbacks.process(callback));
        },
        std::chrono::milliseconds(10'000), metrics);
    const auto run = querier.run(*payment, true);
    std::cout << "query: payment=" << payment_no
              << " channel=" << seatflow::domain::to_string(payment->channel)
              << " result=" << seatflow::actors::to_string(run.result);
    if (run.outcome) {
      std::cout << " outcome=" << seatflow::domain::to_string(run.outcome->result);
    }
    if (!run.detail.empty()) {
      std::cout << " detail=\"" << run.detail << '"';
    }
    std::cout << '\n';
    switch (run.result) {
      case seatflow::actors::QueryResult::no_channel:
        return 1;
      case seatflow::actors::QueryResult::unreachable:
      case seatflow::actors::QueryResult::rejected:
        return 3;
      default:
        return 0;
    }
  } catch (const std::exception& error) {
    std::cerr << "seatflow: query failed: " << error.what() << '\n';
    return 2;
  }
}

int run_check(const CliOverrides& overrides, const RepairOptions& options) {
  const auto config = load(overrides, true);
  if (!config) {
    return 2;
  }
  seatflow::persistence::CheckOptions check;
  check.batch = options.batch > 0 ? options.batch : config->engine.reconciler.batch;
  check.scope_prefix = options.scope_prefix;
  try {
    pqxx::connection conn(
        seatflow::persistence::with_connection_defaults(config->pg_dsn, config->engine.store.pg));
    auto redis = tool_redis(*config);
    const auto summary = seatflow::persistence::check_invariants(
        conn, *redis, check, [](const seatflow::persistence::Violation& v) {
          std::cout << "violation kind=" << v.kind << " subject=" << v.subject << " detail=\""
                    << v.detail << "\"\n";
        });
    std::cout << "check: orders=" << summary.orders << " seat_fields=" << summary.seat_fields
              << " violations=" << summary.violations;
    for (const auto& [kind, count] : summary.by_kind) {
      std::cout << ' ' << kind << '=' << count;
    }
    std::cout << '\n';
    return summary.violations == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "seatflow: check failed: " << e.what() << '\n';
    return 2;
  }
}

struct SignOptions {
  std::string payment_no;
  int status = 1;
  std::string callback_id;
  std::int64_t timestamp_ms = 0;
  bool body_only = false;
  std::string channel = "hmac";
  seatflow::app::GatewaySignOptions gateway;  // --channel alipay|wechat|stripe|standard
};

// The alipay/wechat/stripe/standard options of `seatflow sign`.
void add_gateway_sign_options(CLI::App* sign, SignOptions& options) {
  auto& g = options.gateway;
  sign->add_option("--channel", options.channel,
                   "hmac (default), alipay, wechat, stripe or standard")
      ->check(CLI::IsMember({"hmac", "alipay", "wechat", "stripe", "standard"}));
  sign->add_option("--private-key", g.private_key_path, "alipay/wechat: the gateway's private key");
  sign->add_option("--app-id", g.app_id, "alipay: default SEATFLOW_ALIPAY_APP_ID");
  sign->add_option("--amount", g.amount, "alipay: total_amount in yuan (default 50.00)");
  sign->add_option("--trade-status", g.trade_status, "alipay: default TRADE_SUCCESS");
  sign->add_option(
      "--trade-no", g.trade_no,
      "alipay/stripe/standard: trade_no, data.object.id or data.tradeNo; default fresh");
  sign->add_option("--notify-id", g.notify_id, "alipay: default a fresh notify_id");
  sign->add_option("--charset", g.charset, "alipay: utf-8 (default) or gbk");
  sign->add_option("--serial", g.serial, "wechat: default the first configured serial");
  sign->add_option("--apiv3-key", g.apiv3_key, "wechat: default SEATFLOW_WECHAT_APIV3_KEY");
  sign->add_option("--mchid", g.mchid, "wechat: default SEATFLOW_WECHAT_MCHID");
  sign->add_option("--trade-state", g.trade_state, "wechat: default SUCCESS");
  sign->add_option("--amount-fen", g.amount_fen, "wechat: amount.total in fen (default 5000)")
      ->check(CLI::NonNegativeNumber);
  sign->add_option("--transaction-id", g.transaction_id, "wechat: default a fresh id");
  sign->add_option("--id", g.id, "wechat: notification id, default a fresh id");
  sign->add_option("--amount-cents", g.amount_cents,
                   "stripe/standard: amount in minor units (5000)")
      ->check(CLI::NonNegativeNumber);
  sign->add_option("--event-type", g.event_type,
                   "stripe/standard: event type, default from --status");
}

int run_sign(const CliOverrides& overrides, SignOptions options) {
  const auto config = load(overrides, false);
  if (!config) {
    return 2;
  }
  if (options.channel != "hmac") {
    options.gateway.channel = options.channel;
    options.gateway.payment_no = options.payment_no;
    options.gateway.timestamp_ms = options.timestamp_ms;
    options.gateway.body_only = options.body_only;
    options.gateway.status = options.status;
    options.gateway.callback_id = options.callback_id;
    return seatflow::app::run_gateway_sign(options.gateway, *config, std::cout, std::cerr);
  }
  const auto now_ms = seatflow::domain::unix_time_ms();
  const auto callback_id = options.callback_id.empty()
                               ? "cb-" + options.payment_no + "-" + std::to_string(now_ms)
                               : options.callback_id;
  const seatflow::channels::HmacChannel channel(
      seatflow::channels::HmacConfig{config->callback_secrets, config->callback_window_ms});
  const auto body = channel.signed_body(callback_id, options.payment_no, options.status,
                                        options.timestamp_ms != 0 ? options.timestamp_ms : now_ms);
  if (options.body_only) {
    std::cout << body << '\n';
    return 0;
  }
  std::cout << body << "\n\ncurl -sS -X POST http://" << config->http.host << ':'
            << config->http.port << "/api/payment/notify/hmac -H 'Content-Type: application/json' "
            << "--data '" << body << "'\n";
  return 0;
}

// Set by SIGINT/SIGTERM while `events tail` runs; the loop reads it between reads.
std::atomic<bool> g_stop_tail{false};

void request_tail_stop(int /*signal*/) {
  g_stop_tail.store(true, std::memory_order_relaxed);
}

int run_events_tail(const CliOverrides& overrides, seatflow::app::TailOptions options) {
  const auto config = load(overrides, false);
  if (!config) {
    return 2;
  }
  if (config->redis_url.empty()) {
    std::cerr << "seatflow: configuration error: SEATFLOW_REDIS_URL is not set\n";
    return 2;
  }
  std::string why;
  const auto endpoint = seatflow::persistence::parse_redis_url(config->redis_url, &why);
  options.stream = config->engine.event_relay.relay.stream;
  struct sigaction action {};
  action.sa_handler = request_tail_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return seatflow::app::run_events_tail(options, *endpoint, g_stop_tail, std::cout, std::cerr);
}

// The command line: every subcommand with its flags, each flag also an environment setting.
struct Commands {
  CLI::App* serve = nullptr;
  CLI::App* migrate = nullptr;
  CLI::App* version = nullptr;
  CLI::App* reconcile = nullptr;
  CLI::App* check = nullptr;
  CLI::App* sign = nullptr;
  CLI::App* tail = nullptr;
  CLI::App* query = nullptr;
  CliOverrides overrides;
  RepairOptions repair;
  SignOptions sign_options;
  seatflow::app::TailOptions tail_options;
  std::string query_payment;
};

// Adds `name` to `sub`: its value overrides the environment setting `env`.
void add_setting_flag(CLI::App* sub, CliOverrides& overrides, const std::string& name,
                      const std::string& env, const std::string& help) {
  sub->add_option_function<std::string>(
      name, [&overrides, env](const std::string& v) { overrides.values[env] = v; },
      help + " (env " + env + ")");
}

void define_server_commands(CLI::App& app, Commands& c) {
  const auto flag = [&c](CLI::App* sub, const std::string& name, const std::string& env,
                         const std::string& help) {
    add_setting_flag(sub, c.overrides, name, env, help);
  };
  c.serve = app.add_subcommand("serve", "Serve gateway callbacks over HTTP until SIGINT/SIGTERM");
  flag(c.serve, "--profile", "SEATFLOW_PROFILE", "dev or prod");
  flag(c.serve, "--http-addr", "SEATFLOW_HTTP_ADDR", "listen address host:port");
  flag(c.serve, "--pg-dsn", "SEATFLOW_PG_DSN", "PostgreSQL connection URI");
  flag(c.serve, "--redis-url", "SEATFLOW_REDIS_URL", "Redis URL redis://host:port[/db]");
  flag(c.serve, "--failpoints", "SEATFLOW_FAILPOINTS", "fault injection, e.g. mark_sold=error@0.1");
  flag(c.serve, "--retention-horizon", "SEATFLOW_RETENTION_HORIZON",
       "age (by received_at) after which callback-log rows and their raw requests are removed, "
       "e.g. 30d; payment events are WAL messages, freed when the relay confirms them");

  c.migrate = app.add_subcommand("migrate", "Apply the schema migrations (safe to repeat)");
  flag(c.migrate, "--pg-dsn", "SEATFLOW_PG_DSN", "PostgreSQL connection URI");

  c.version = app.add_subcommand("version", "Print the version and exit");

  c.reconcile = app.add_subcommand(
      "reconcile", "Repair the Redis seat hashes from PostgreSQL (a pass every interval)");
  c.reconcile->add_flag("--once", c.repair.once, "run one full pass, print a summary, exit");
  c.check = app.add_subcommand(
      "check", "Verify the PostgreSQL/Redis invariants; exit 1 when any is violated");
  for (auto* sub : {c.reconcile, c.check}) {
    flag(sub, "--pg-dsn", "SEATFLOW_PG_DSN", "PostgreSQL connection URI");
    flag(sub, "--redis-url", "SEATFLOW_REDIS_URL", "Redis URL redis://host:port[/db]");
    sub->add_option("--batch", c.repair.batch, "orders per batch (default the setting)")
        ->check(CLI::Range(1, 100'000));
    sub->add_option("--scope-prefix", c.repair.scope_prefix,
                    "only orders (and shows) whose id starts with this");
  }
}

void define_tool_commands(CLI::App& app, Commands& c) {
  const auto flag = [&c](CLI::App* sub, const std::string& name, const std::string& env,
                         const std::string& help) {
    add_setting_flag(sub, c.overrides, name, env, help);
  };
  c.sign = app.add_subcommand(
      "sign", "Print a signed callback (hmac, alipay, wechat, stripe or standard) and a curl line");
  c.sign->add_option("--payment-no", c.sign_options.payment_no, "the payment to report on")
      ->required();
  c.sign->add_option("--status", c.sign_options.status, "1 = success, 2 = failure")
      ->check(CLI::Range(0, 9));
  c.sign->add_option("--callback-id", c.sign_options.callback_id, "default: a fresh id");
  c.sign->add_option("--timestamp", c.sign_options.timestamp_ms, "epoch ms; default: now");
  c.sign->add_flag("--body-only", c.sign_options.body_only, "print only the body");
  add_gateway_sign_options(c.sign, c.sign_options);
  flag(c.sign, "--http-addr", "SEATFLOW_HTTP_ADDR", "engine address for the curl line");

  auto* events = app.add_subcommand("events", "Payment events on the Redis Stream");
  events->require_subcommand(1);
  c.tail = events->add_subcommand(
      "tail", "Print payment events as JSON lines (one per stream entry) until SIGINT");
  c.tail->add_option(
      "--from", c.tail_options.from,
      "start after this stream id (default 0: the whole retained stream; $: new only)");
  c.tail->add_option("--count", c.tail_options.count, "exit after this many events")
      ->check(CLI::NonNegativeNumber);
  c.tail->add_flag("--once", c.tail_options.once, "exit when no more events are waiting");
  flag(c.tail, "--redis-url", "SEATFLOW_REDIS_URL", "Redis URL redis://host:port[/db]");
  flag(c.tail, "--stream", "SEATFLOW_EVENT_STREAM", "stream key (default seatflow:events)");

  c.query = app.add_subcommand(
      "query", "Ask the payment's gateway now and apply a paid or failed answer (SPEC §10)");
  c.query->add_option("payment-no", c.query_payment, "the payment to ask about")->required();
  flag(c.query, "--pg-dsn", "SEATFLOW_PG_DSN", "PostgreSQL connection URI");
  flag(c.query, "--redis-url", "SEATFLOW_REDIS_URL", "Redis URL redis://host:port[/db]");
}

// Runs the subcommand the command line named.
int run_command(const Commands& c) {
  if (c.query->parsed()) {
    return run_query(c.overrides, c.query_payment);
  }
  if (c.tail->parsed()) {
    return run_events_tail(c.overrides, c.tail_options);
  }
  if (c.serve->parsed()) {
    return run_serve(c.overrides);
  }
  if (c.migrate->parsed()) {
    return run_migrate(c.overrides);
  }
  if (c.reconcile->parsed()) {
    return run_reconcile(c.overrides, c.repair);
  }
  if (c.check->parsed()) {
    return run_check(c.overrides, c.repair);
  }
  if (c.sign->parsed()) {
    return run_sign(c.overrides, c.sign_options);
  }
  if (c.version->parsed()) {
    std::cout << "seatflow " << SEATFLOW_VERSION << " (CAF " << CAF_VERSION / 10000 << '.'
              << (CAF_VERSION / 100) % 100 << '.' << CAF_VERSION % 100 << ", libpqxx "
              << PQXX_VERSION << ", allocator " << allocator_name() << ")\n";
    return 0;
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything else touches OpenSSL (channels/crypto.hpp says why).
  if (!seatflow::channels::keep_openssl_until_exit()) {
    std::cerr << "seatflow: OpenSSL failed to initialise\n";
    return 1;
  }
  CLI::App app{
      "SeatFlow: proves payment-gateway callbacks genuine and applies each exactly once.\n"
      "Settings come from SEATFLOW_* environment variables; flags override them."};
  app.require_subcommand(1);
  Commands commands;
  define_server_commands(app, commands);
  define_tool_commands(app, commands);
  CLI11_PARSE(app, argc, argv);
  return run_command(commands);
}

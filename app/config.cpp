// Parses and validates SeatFlow's settings; every error names the setting and the reason.
#include "app/config.hpp"

#include "app/config_readers.hpp"
#include "app/front_door_config.hpp"
#include "app/setting_names.hpp"

#include <algorithm>
#include <charconv>
#include <iostream>
#include <limits>
#include <utility>

#include "persistence/drivers/failpoints.hpp"
#include "persistence/drivers/redis.hpp"

namespace seatflow::app {
namespace config_readers {

bool read_switch(const SettingLookup& lookup, const std::string& name, bool fallback) {
  const auto raw = lookup(name);
  if (!raw) {
    return fallback;
  }
  if (*raw == "on" || *raw == "true" || *raw == "1") {
    return true;
  }
  if (*raw == "off" || *raw == "false" || *raw == "0") {
    return false;
  }
  throw ConfigError{name + "='" + *raw + "' must be on or off"};
}

}  // namespace config_readers

namespace {

using config_readers::ConfigError;
using config_readers::read_number;
using config_readers::read_switch;

void read_http_addr(const std::string& addr, http::HttpConfig& http) {
  const auto colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == addr.size()) {
    throw ConfigError{"SEATFLOW_HTTP_ADDR='" + addr + "' must be host:port"};
  }
  unsigned port = 0;
  const auto port_text = addr.substr(colon + 1);
  const auto [ptr, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || ptr != port_text.data() + port_text.size() || port > 65535) {
    throw ConfigError{"SEATFLOW_HTTP_ADDR='" + addr + "' has an invalid port"};
  }
  http.host = addr.substr(0, colon);
  http.port = static_cast<std::uint16_t>(port);
}

// The store limits and their relations: a lock wait ends before the statement, the statement
// before the client-side call deadline; the stop bound leaves room for a connect attempt.
void read_store_deadlines(const SettingLookup& lookup, Config& config) {
  using u32 = std::uint32_t;
  auto& engine = config.engine;
  auto& pg = engine.store.pg;
  read_number<u32>(lookup, "SEATFLOW_PG_CONNECT_TIMEOUT_MS", pg.connect_ms_max, 1'000, 600'000);
  read_number<u32>(lookup, "SEATFLOW_PG_KEEPALIVE_IDLE_S", pg.keepalive_idle_s, 1, 7'200);
  read_number<u32>(lookup, "SEATFLOW_PG_KEEPALIVE_INTERVAL_S", pg.keepalive_interval_s, 1, 600);
  read_number<u32>(lookup, "SEATFLOW_PG_KEEPALIVE_PROBES_MAX", pg.keepalive_probes_max, 1, 100);
  read_number<u32>(lookup, "SEATFLOW_PG_TCP_USER_TIMEOUT_MS", pg.tcp_unacked_ms_max, 0, 600'000);
  read_number<u32>(lookup, "SEATFLOW_PG_STATEMENT_TIMEOUT_MS", pg.statement_ms_max, 10, 600'000);
  read_number<u32>(lookup, "SEATFLOW_PG_LOCK_TIMEOUT_MS", pg.lock_wait_ms_max, 10, 600'000);
  read_number<u32>(lookup, "SEATFLOW_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS",
                   pg.idle_in_transaction_ms_max, 100, 3'600'000);
  read_number<u32>(lookup, "SEATFLOW_PG_CALL_TIMEOUT_MS", pg.call_ms_max, 100, 600'000);
  read_number<u32>(lookup, "SEATFLOW_PG_PLAN_REFRESH_MS", pg.plan_refresh_ms, 0, 3'600'000);
  read_number<u32>(lookup, "SEATFLOW_REDIS_TIMEOUT_MS", engine.store.redis_timeout_ms, 10, 600'000);
  read_number<u32>(lookup, "SEATFLOW_READY_PROBE_INTERVAL_MS", engine.prober.interval_ms, 50,
                   60'000);
  read_number<u32>(lookup, "SEATFLOW_READY_PROBE_TIMEOUT_MS", engine.prober.probe_ms_max, 50,
                   60'000);
  read_number<u32>(lookup, "SEATFLOW_SHUTDOWN_TIMEOUT_MS", config.shutdown_ms_max, 1'000, 600'000);
  if (pg.lock_wait_ms_max > pg.statement_ms_max) {
    throw ConfigError{
        "SEATFLOW_PG_LOCK_TIMEOUT_MS must not exceed SEATFLOW_PG_STATEMENT_TIMEOUT_MS"};
  }
  if (pg.call_ms_max <= pg.statement_ms_max) {
    throw ConfigError{
        "SEATFLOW_PG_CALL_TIMEOUT_MS must exceed SEATFLOW_PG_STATEMENT_TIMEOUT_MS (the server's "
        "own timeout should fire first)"};
  }
}

void read_limits(const SettingLookup& lookup, Config& config) {
  auto& http = config.http;
  auto& engine = config.engine;
  using sz = std::size_t;
  using u32 = std::uint32_t;
  read_number<sz>(lookup, "SEATFLOW_HTTP_IO_THREADS", http.io_threads, 1, 64);
  // No dialect reads a larger body, so a larger limit would only let bigger requests in to be
  // refused after they were read.
  read_number<sz>(lookup, "SEATFLOW_BODY_BYTES_MAX", http.body_bytes_max, 256,
                  channels::kGatewayBodyBytesMax);
  read_number<sz>(lookup, "SEATFLOW_HEADER_BYTES_MAX", http.header_bytes_max, 512, 1 << 20);
  read_number<u32>(lookup, "SEATFLOW_READ_TIMEOUT_MS", http.read_timeout_ms, 100, 600'000);
  read_number<u32>(lookup, "SEATFLOW_IDLE_TIMEOUT_MS", http.idle_timeout_ms, 100, 3'600'000);
  read_number<sz>(lookup, "SEATFLOW_CONNECTIONS_MAX", http.connections_max, 1, 1'000'000);
  read_number<sz>(lookup, "SEATFLOW_INFLIGHT_CALLBACKS_MAX", http.inflight_callbacks_max, 1,
                  1'000'000);
  if (const auto policy = lookup("SEATFLOW_SCHEDULER_POLICY")) {
    if (*policy != "sharing" && *policy != "stealing") {
      throw ConfigError{"SEATFLOW_SCHEDULER_POLICY='" + *policy + "' must be sharing or stealing"};
    }
    engine.scheduler_policy = *policy;
  }
  read_number<sz>(lookup, "SEATFLOW_SCHEDULER_THREADS", engine.scheduler_threads, 1, 64);
  read_number<sz>(lookup, "SEATFLOW_PG_POOL_SIZE", engine.pg_pool_size, 1, 256);
  read_number<sz>(lookup, "SEATFLOW_PAYMENT_MAILBOX_CALLBACKS_MAX",
                  engine.router.payment.mailbox_callbacks_max, 1, 100'000);
  read_number<sz>(lookup, "SEATFLOW_PAYMENT_ACTORS_MAX", engine.router.payment_actors_max, 1,
                  50'000'000);
  read_number<u32>(lookup, "SEATFLOW_PASSIVATE_IDLE_MS", engine.router.payment.passivate_idle_ms,
                   10, 86'400'000);
  read_number<sz>(lookup, "SEATFLOW_SPARE_PAYMENT_ACTORS_MAX",
                  engine.router.spare_payment_actors_max, 0, 1'000'000);
  read_number<u32>(lookup, "SEATFLOW_PERSIST_TIMEOUT_MS", engine.router.payment.persist_timeout_ms,
                   100, 600'000);
  read_store_deadlines(lookup, config);
  read_number<sz>(lookup, "SEATFLOW_COMMIT_BATCH_CALLBACKS_MAX", engine.batcher.batch_callbacks_max,
                  1, 4096);
  read_number<sz>(lookup, "SEATFLOW_COMMIT_QUEUE_CALLBACKS_MAX",
                  engine.batcher.queued_callbacks_max, 1, 10'000'000);
  read_number<sz>(lookup, "SEATFLOW_COMMIT_FILL_CALLBACKS_MIN",
                  engine.batcher.batch_fill_callbacks_min, 0, 4096);
  read_number<u32>(lookup, "SEATFLOW_COMMIT_FILL_WAIT_US_MAX",
                   engine.batcher.batch_fill_wait_us_max, 0, 50'000);
  if (engine.batcher.batch_fill_callbacks_min > engine.batcher.batch_callbacks_max) {
    if (lookup("SEATFLOW_COMMIT_FILL_CALLBACKS_MIN")) {
      throw ConfigError{
          "SEATFLOW_COMMIT_FILL_CALLBACKS_MIN must not exceed SEATFLOW_COMMIT_BATCH_CALLBACKS_MAX"};
    }
    // The default fill size shrinks to a smaller batch size set alone.
    engine.batcher.batch_fill_callbacks_min = engine.batcher.batch_callbacks_max;
  }
  read_number<u32>(lookup, "SEATFLOW_DUPLICATE_FLUSH_MS", engine.flusher.interval_ms, 10, 60'000);
  read_number<u32>(lookup, "SEATFLOW_DUPLICATE_HEAL_INTERVAL_MS", engine.flusher.heal_interval_ms,
                   0, 3'600'000);
  read_number<sz>(lookup, "SEATFLOW_API_POOL_SIZE", engine.api_pool_size, 1, 64);
  read_number<sz>(lookup, "SEATFLOW_INFLIGHT_API_REQUESTS_MAX", http.inflight_api_max, 1, 100'000);
  read_number<std::int64_t>(lookup, "SEATFLOW_ORDER_TIMEOUT_MS", config.api.order_timeout_ms, 1'000,
                            7LL * 24 * 3600 * 1000);
  read_number<u32>(lookup, "SEATFLOW_SWEEP_INTERVAL_MS", engine.sweeper.interval_ms, 10, 3'600'000);
  read_number<sz>(lookup, "SEATFLOW_SWEEP_BATCH_ORDERS_MAX", engine.sweeper.batch, 1, 100'000);
  read_number<u32>(lookup, "SEATFLOW_RECONCILE_INTERVAL_MS", engine.reconciler.interval_ms, 0,
                   86'400'000);
  read_number<sz>(lookup, "SEATFLOW_RECONCILE_BATCH_ORDERS_MAX", engine.reconciler.batch, 1,
                  100'000);
  read_number<u32>(lookup, "SEATFLOW_MOCK_GATEWAY_DELAY_MS", config.mock_gateway.delay_ms, 0,
                   600'000);
}

void read_switches(const SettingLookup& lookup, Config& config) {
  const bool dev = config.profile == Profile::dev;
  config.engine.sweeper.enabled =
      read_switch(lookup, "SEATFLOW_SWEEPER", config.engine.sweeper.enabled);
  config.engine.memory_duplicates =
      read_switch(lookup, "SEATFLOW_MEMORY_DUPLICATES", config.engine.memory_duplicates);
  auto& mock = config.mock_gateway;
  mock.enabled = read_switch(lookup, "SEATFLOW_MOCK_GATEWAY", dev);
  if (mock.enabled && !dev) {
    throw ConfigError{"SEATFLOW_MOCK_GATEWAY=on is refused in the prod profile"};
  }
  mock.auto_pay = read_switch(lookup, "SEATFLOW_MOCK_GATEWAY_AUTO", mock.auto_pay);
  mock.keeps_deadline = read_switch(lookup, "SEATFLOW_MOCK_GATEWAY_DEADLINE", mock.keeps_deadline);
  // Prod keeps checking Redis's eviction policy after the start-up check (SPEC §14).
  config.engine.prober.require_noeviction = !dev;
}

void read_events(const SettingLookup& lookup, Config& config) {
  auto& relay = config.engine.event_relay;
  auto& retention = config.engine.retention;
  using sz = std::size_t;
  relay.enabled = read_switch(lookup, "SEATFLOW_EVENT_RELAY", relay.enabled);
  if (const auto stream = lookup("SEATFLOW_EVENT_STREAM")) {
    if (stream->empty() || stream->size() > 200) {
      throw ConfigError{"SEATFLOW_EVENT_STREAM must be a Redis key of 1 to 200 bytes"};
    }
    relay.relay.stream = *stream;
  }
  if (const auto slot = lookup("SEATFLOW_EVENT_SLOT")) {
    // PostgreSQL's rule for replication slot names; at most NAMEDATALEN - 1 bytes.
    const bool valid =
        !slot->empty() && slot->size() <= 63 && std::all_of(slot->begin(), slot->end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        });
    if (!valid) {
      throw ConfigError{
          "SEATFLOW_EVENT_SLOT must be 1 to 63 of lower-case letters, digits and '_'"};
    }
    relay.relay.slot = *slot;
  }
  read_number<sz>(lookup, "SEATFLOW_EVENT_STREAM_ENTRIES_MAX", relay.relay.stream_maxlen, 1'000,
                  1'000'000'000);
  read_number<sz>(lookup, "SEATFLOW_EVENT_RELAY_BATCH_EVENTS_MAX", relay.relay.batch, 1, 10'000);
  read_number<std::uint32_t>(lookup, "SEATFLOW_EVENT_RELAY_BUSY_INTERVAL_MS",
                             relay.busy_interval_ms, 1, 60'000);
  read_number<std::uint32_t>(lookup, "SEATFLOW_EVENT_RELAY_INTERVAL_MS", relay.interval_ms, 10,
                             60'000);
  read_number<std::uint32_t>(lookup, "SEATFLOW_EVENT_SENDER_TIMEOUT_MS",
                             relay.relay.sender_timeout_ms, 3'000, 3'600'000);
  // The relay answers the server's keepalives when it polls: several polls per timeout.
  if (relay.relay.sender_timeout_ms < 3 * relay.interval_ms) {
    throw ConfigError{
        "SEATFLOW_EVENT_SENDER_TIMEOUT_MS must be at least 3 times "
        "SEATFLOW_EVENT_RELAY_INTERVAL_MS"};
  }
  retention.enabled = read_switch(lookup, "SEATFLOW_RETENTION", retention.enabled);
  if (const auto horizon = lookup("SEATFLOW_RETENTION_HORIZON")) {
    const auto ms = parse_duration_ms(*horizon);
    if (!ms || *ms < 1'000) {
      throw ConfigError{"SEATFLOW_RETENTION_HORIZON='" + *horizon +
                        "' must be a duration of at least 1s, e.g. 30d, 36h or 10s"};
    }
    retention.horizon_ms = *ms;
  }
  if (config.profile == Profile::prod && retention.horizon_ms < kMinProdRetentionMs) {
    throw ConfigError{
        "SEATFLOW_RETENTION_HORIZON must be at least 2d in the prod profile (longer than any "
        "gateway's retry window)"};
  }
  read_number<sz>(lookup, "SEATFLOW_RETENTION_BATCH_ROWS_MAX", retention.batch, 1, 100'000);
  read_number<std::uint32_t>(lookup, "SEATFLOW_RETENTION_INTERVAL_MS", retention.interval_ms, 100,
                             86'400'000);
}

// JWTs have a key of their own: whoever holds the bearer token must not be able to mint tokens.
void read_jwt_settings(const SettingLookup& lookup, Config& config) {
  config.api_jwt_key = lookup("SEATFLOW_API_JWT_KEY").value_or("");
  if (config.profile == Profile::prod && !config.api_jwt_key.empty() &&
      config.api_jwt_key.size() < kProdApiTokenBytesMin) {
    throw ConfigError{"SEATFLOW_API_JWT_KEY: prod keys must be at least " +
                      std::to_string(kProdApiTokenBytesMin) + " bytes"};
  }
  if (!config.api_jwt_key.empty() && config.api_jwt_key == config.api_token) {
    throw ConfigError{"SEATFLOW_API_JWT_KEY must differ from SEATFLOW_API_TOKEN"};
  }
  if (const auto lifetime = lookup("SEATFLOW_API_JWT_LIFETIME_MAX")) {
    constexpr std::int64_t kLifetimeMsMax = 30LL * 24 * 3600 * 1000;
    const auto ms = parse_duration_ms(*lifetime);
    if (!ms || *ms < 1'000 || *ms > kLifetimeMsMax) {
      throw ConfigError{"SEATFLOW_API_JWT_LIFETIME_MAX='" + *lifetime +
                        "' must be a duration from 1s to 30d, e.g. 1h"};
    }
    config.api_jwt_lifetime_ms_max = *ms;
  }
}

void read_secrets(const SettingLookup& lookup, Config& config) {
  if (const auto raw = lookup("SEATFLOW_CALLBACK_SECRETS")) {
    config.callback_secrets = split_list(*raw, ',');
    if (config.callback_secrets.empty()) {
      throw ConfigError{"SEATFLOW_CALLBACK_SECRETS is set but lists no secret"};
    }
  }
  if (config.callback_secrets.empty()) {
    if (config.profile == Profile::prod) {
      throw ConfigError{"SEATFLOW_CALLBACK_SECRETS is required in the prod profile"};
    }
    config.callback_secrets.emplace_back(kDevCallbackSecret);
  }
  for (const auto& secret : config.callback_secrets) {
    if (config.profile == Profile::prod && secret == kDevCallbackSecret) {
      throw ConfigError{"SEATFLOW_CALLBACK_SECRETS holds the dev-only secret; prod refuses it"};
    }
    if (config.profile == Profile::prod && secret.size() < kMinProdSecretBytes) {
      throw ConfigError{"SEATFLOW_CALLBACK_SECRETS: prod secrets must be at least " +
                        std::to_string(kMinProdSecretBytes) + " bytes"};
    }
  }
  config.api_token = lookup("SEATFLOW_API_TOKEN").value_or("");
  // Dev gets a token that names itself; prod without one serves no API (every call is 401).
  if (config.api_token.empty() && config.profile == Profile::dev) {
    config.api_token = kDevApiToken;
  }
  if (config.profile == Profile::prod && config.api_token == kDevApiToken) {
    throw ConfigError{"SEATFLOW_API_TOKEN holds the dev-only token; prod refuses it"};
  }
  if (config.profile == Profile::prod && !config.api_token.empty() &&
      config.api_token.size() < kProdApiTokenBytesMin) {
    throw ConfigError{"SEATFLOW_API_TOKEN: prod tokens must be at least " +
                      std::to_string(kProdApiTokenBytesMin) + " bytes"};
  }
  read_jwt_settings(lookup, config);
}

Config build(const SettingLookup& lookup, bool require_stores) {
  Config config;
  const auto profile = lookup("SEATFLOW_PROFILE").value_or("dev");
  if (profile == "dev") {
    config.profile = Profile::dev;
  } else if (profile == "prod") {
    config.profile = Profile::prod;
  } else {
    throw ConfigError{"SEATFLOW_PROFILE='" + profile + "' must be dev or prod"};
  }
  read_http_addr(lookup("SEATFLOW_HTTP_ADDR").value_or("127.0.0.1:8080"), config.http);
  read_limits(lookup, config);
  read_front_door(lookup, config.http);
  read_switches(lookup, config);
  read_secrets(lookup, config);
  read_events(lookup, config);
  config_readers::read_alipay(lookup, config);
  config_readers::read_wechat(lookup, config);
  config_readers::read_webhooks(lookup, config);
  config_readers::read_query(lookup, config);
  config_readers::read_bill(lookup, config);
  config_readers::read_payment_gateway(lookup, config);
  config.pg_dsn = lookup("SEATFLOW_PG_DSN").value_or("");
  config.redis_url = lookup("SEATFLOW_REDIS_URL").value_or("");
  if (require_stores && config.pg_dsn.empty()) {
    throw ConfigError{"SEATFLOW_PG_DSN is not set (./run.sh sets it for the embedded server)"};
  }
  if (require_stores && config.redis_url.empty()) {
    throw ConfigError{"SEATFLOW_REDIS_URL is not set (./run.sh sets it for the embedded server)"};
  }
  if (!config.redis_url.empty()) {
    if (const auto parsed = persistence::parse_redis_url(config.redis_url); !parsed.ok()) {
      throw ConfigError{"SEATFLOW_REDIS_URL " + parsed.detail()};
    }
  }
  config_readers::read_redis_sentinels(lookup, config);
  config.failpoints = lookup("SEATFLOW_FAILPOINTS").value_or("");
  if (!config.failpoints.empty() && config.profile == Profile::prod) {
    throw ConfigError{"SEATFLOW_FAILPOINTS is refused in the prod profile (fault injection)"};
  }
  if (!config.failpoints.empty()) {
    if (const auto parsed = persistence::Failpoints::parse(config.failpoints); !parsed.ok()) {
      throw ConfigError{"SEATFLOW_FAILPOINTS " + parsed.detail()};
    }
  }
  config.log_level = lookup("SEATFLOW_LOG_LEVEL").value_or("info");
  if (config.log_level != "debug" && config.log_level != "info" && config.log_level != "warn" &&
      config.log_level != "error") {
    throw ConfigError{"SEATFLOW_LOG_LEVEL='" + config.log_level +
                      "' must be debug|info|warn|error"};
  }
  return config;
}

}  // namespace

std::optional<std::int64_t> parse_duration_ms(const std::string& text) {
  constexpr std::int64_t kMaxMs = 10LL * 365 * 24 * 3600 * 1000;  // ten years
  std::int64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr == text.data() || value < 0) {
    return std::nullopt;
  }
  const std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
  std::int64_t scale = 0;
  if (unit == "ms") {
    scale = 1;
  } else if (unit == "s") {
    scale = 1'000;
  } else if (unit == "m") {
    scale = 60'000;
  } else if (unit == "h") {
    scale = 3'600'000;
  } else if (unit == "d") {
    scale = 86'400'000;
  } else {
    return std::nullopt;
  }
  if (value > kMaxMs / scale) {
    return std::nullopt;
  }
  return value * scale;
}

std::vector<std::string> split_list(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find(separator, start);
    if (end == std::string::npos) {
      end = text.size();
    }
    auto item = text.substr(start, end - start);
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) {
      out.push_back(item.substr(first, last - first + 1));
    }
    start = end + 1;
  }
  return out;
}

ConfigResult load_config(const SettingLookup& lookup, bool require_stores) {
  std::vector<std::string> warnings;
  const auto aliased = with_old_names(lookup, warnings);
  // Logging starts once the configuration is known, so these lines go to stderr like its errors.
  for (const auto& line : warnings) {
    std::cerr << "seatflow: configuration warning: " << line << '\n';
  }
  try {
    return {build(aliased, require_stores), {}, std::move(warnings)};
  } catch (const ConfigError& e) {
    return {std::nullopt, e.message, std::move(warnings)};
  }
}

}  // namespace seatflow::app

// The engine's configuration as a plain struct, and its parsing from environment-style settings.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "actors/orders_config.hpp"
#include "actors/readiness.hpp"
#include "channels/alipay_channel.hpp"
#include "channels/standard_channel.hpp"
#include "channels/stripe_channel.hpp"
#include "channels/wechat_channel.hpp"
#include "domain/types.hpp"
#include "http/config.hpp"
#include "persistence/pg_limits.hpp"

namespace seatflow::app {

enum class Profile : std::uint8_t { dev, prod };

// The dev-only secret says what it is in its own value; prod refuses to start with it.
inline constexpr const char* kDevCallbackSecret = "seatflow-dev-only-callback-secret-not-for-prod";
inline constexpr const char* kDevApiToken = "seatflow-dev-only-api-token";

struct EngineConfig {
  std::string scheduler_policy = "sharing";  // CAF scheduler: sharing | stealing
  std::size_t scheduler_threads = 1;
  std::size_t pg_pool_size = 2;  // persistence actors, one connection each (bench/tune.sh)
  std::size_t payment_mailbox_limit = 256;   // queued callbacks per payment actor
  std::size_t max_payment_actors = 200'000;  // live payment actors at once
  std::uint32_t passivate_idle_ms = 5'000;   // idle payment actors stop after this (bench/scale.sh)
  std::uint32_t persist_timeout_ms = 10'000;  // a commit not done by then answers 503
  persistence::PgLimits pg;  // SEATFLOW_PG_*: connect, TCP, session and call deadlines
  std::uint32_t redis_timeout_ms = 2'000;  // connect and each socket read/write
  // The readiness prober runs every interval; a probe that takes longer than its bound counts as
  // not ready at once (the probe's own deadline, so /readyz never waits for a store).
  actors::ProberSettings ready_probe;
  // SIGTERM to exit, whatever the stores do; an uncommitted callback is never ACKed.
  std::uint32_t shutdown_ms_max = 15'000;
  std::size_t commit_batch = 256;            // callbacks per group-commit transaction
  std::size_t commit_queue = 100'000;        // callbacks waiting for a persistence actor
  bool memory_duplicates = true;             // fold and answer committed duplicates in memory
  std::uint32_t duplicate_flush_ms = 1'000;  // duplicate counts reach PostgreSQL within this
  std::uint32_t duplicate_heal_interval_ms = 10'000;  // one self-heal per payment per interval
  std::size_t api_pool_size = 2;                      // API actors, one connection pair each
  std::size_t max_inflight_api = 256;  // API requests awaiting the store; more → 503
};

// The payment-event outbox relay and retention (README "Payment events").
struct EventsConfig {
  bool relay_enabled = true;
  std::string stream = "seatflow:events";
  std::size_t stream_maxlen = 1'000'000;  // XADD MAXLEN ~ bound
  std::size_t relay_batch = 500;          // events per relay transaction
  std::uint32_t relay_interval_ms = 200;  // poll period when the outbox is drained
  // Poll period after a tick that published: small batches often instead of a burst every
  // relay_interval_ms, which showed as callback latency spikes (docs/BENCHMARKS.md).
  std::uint32_t relay_busy_interval_ms = 20;
  bool retention_enabled = true;
  std::int64_t retention_horizon_ms = 30LL * 24 * 3600 * 1000;
  std::size_t retention_batch = 1'000;  // rows per table per purge batch
  std::uint32_t retention_interval_ms = 60'000;
};

// Active query (SPEC §10, README "Active query").
struct QueryConfig {
  bool enabled = true;  // SEATFLOW_QUERY: the scheduler and the sweeper's query before a cancel
  // SEATFLOW_QUERY_SCHEDULE: the delay before each query (the first after the payment's creation).
  std::vector<std::uint32_t> schedule_ms = {60'000, 300'000, 300'000, 300'000, 300'000, 300'000};
  std::uint32_t rate_per_s = 20;             // SEATFLOW_QUERY_RATE: queries per second per channel
  std::size_t batch = 50;                    // SEATFLOW_QUERY_BATCH: due payments taken per tick
  std::uint32_t tick_ms = 1'000;             // SEATFLOW_QUERY_TICK_MS
  std::uint32_t connect_timeout_ms = 2'000;  // SEATFLOW_QUERY_CONNECT_TIMEOUT_MS
  std::uint32_t timeout_ms = 5'000;          // SEATFLOW_QUERY_TIMEOUT_MS: a whole exchange
  std::size_t response_bytes_max = 256 * 1024;  // SEATFLOW_QUERY_RESPONSE_BYTES_MAX
  std::string ca_file;  // SEATFLOW_QUERY_CA_FILE: PEM trust store for https; empty = the system's
  // SEATFLOW_HMAC_GATEWAY_URL: the hmac gateway's base URL; empty = hmac payments are not queried
  // (in the dev profile with the mock gateway on, the engine's own address).
  std::string hmac_gateway_url;
  // alipay.trade.query (needs the alipay channel): SEATFLOW_ALIPAY_GATEWAY_URL (e.g.
  // https://openapi.alipay.com/gateway.do) and SEATFLOW_ALIPAY_APP_PRIVATE_KEY (PEM path of the
  // merchant key that signs requests). Both or neither.
  std::string alipay_gateway_url;
  std::string alipay_app_private_key_path;
  // The WeChat Pay v3 order query (needs the wechat channel): SEATFLOW_WECHAT_GATEWAY_URL (e.g.
  // https://api.mch.weixin.qq.com), SEATFLOW_WECHAT_MERCHANT_KEY (PEM path) and
  // SEATFLOW_WECHAT_MERCHANT_SERIAL. All three or none.
  std::string wechat_gateway_url;
  std::string wechat_merchant_key_path;
  std::string wechat_merchant_serial;
};
inline constexpr std::size_t kQueryScheduleStepsMax = 100;

// The prod profile refuses an API token or JWT key shorter than this (guessable).
inline constexpr std::size_t kProdApiTokenBytesMin = 32;

// The prod profile refuses a retention horizon shorter than this: a callback-log row must outlive
// every gateway's retry window (Alipay about 25 h, WeChat Pay about 24 h).
inline constexpr std::int64_t kMinProdRetentionMs = 2LL * 24 * 3600 * 1000;

struct Config {
  Profile profile = Profile::dev;
  http::HttpConfig http;
  EngineConfig engine;
  actors::OrdersConfig orders;
  EventsConfig events;
  QueryConfig query;
  std::string pg_dsn;
  std::string redis_url;
  std::vector<std::string> callback_secrets;         // never logged
  std::string api_token;                             // never logged
  std::string api_jwt_key;                           // HS256 key of API JWTs; never logged
  std::int64_t api_jwt_lifetime_ms_max = 3'600'000;  // SEATFLOW_API_JWT_MAX_LIFETIME
  std::string failpoints;                            // SEATFLOW_FAILPOINTS spec, empty = none
  std::int64_t callback_window_ms = 300'000;
  std::string log_level = "info";
  // Gateway dialects (SPEC §5); nullopt = not configured, so the channel answers 404. Their key
  // files were loaded once during validation; the APIv3 key is a secret and never logged.
  std::optional<channels::AlipayConfig> alipay;
  std::optional<channels::WechatConfig> wechat;
  // SPEC §11 webhook dialects; nullopt = no secrets set, so the channel answers 404. Secrets are
  // never logged.
  std::optional<channels::StripeConfig> stripe;
  std::optional<channels::StandardConfig> standard;
  std::string currency = std::string(channels::kDefaultCurrency);  // SEATFLOW_CURRENCY, lower case
};

// Secrets in the prod profile must hold at least this many bytes: SEATFLOW_CALLBACK_SECRETS and
// the webhook secrets (stripe: the secret as written; standard: the decoded key).
inline constexpr std::size_t kMinProdSecretBytes = 16;

// Looks a setting up by its environment name (SEATFLOW_...); nullopt when unset.
using SettingLookup = std::function<std::optional<std::string>(const std::string& name)>;

struct ConfigResult {
  std::optional<Config> config;
  std::string error;  // one line naming the setting and why, when config is empty
};

// Builds and validates the configuration; `require_stores` demands a DSN and a Redis URL.
[[nodiscard]] ConfigResult load_config(const SettingLookup& lookup, bool require_stores);

// Parses a duration such as "30d", "12h", "15m", "10s" or "500ms" into milliseconds.
[[nodiscard]] std::optional<std::int64_t> parse_duration_ms(const std::string& text);

[[nodiscard]] std::vector<std::string> split_list(const std::string& text, char separator);

}  // namespace seatflow::app

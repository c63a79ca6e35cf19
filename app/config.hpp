// The engine's configuration as a plain struct, and its parsing from environment-style settings.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "actors/engine.hpp"
#include "channels/alipay/alipay_channel.hpp"
#include "channels/standard/standard_channel.hpp"
#include "channels/stripe/stripe_channel.hpp"
#include "channels/wechat/wechat_channel.hpp"
#include "domain/types.hpp"
#include "http/config.hpp"
#include "persistence/drivers/pg_limits.hpp"
#include "persistence/drivers/redis.hpp"

namespace seatflow::app {

enum class Profile : std::uint8_t { dev, prod };

// The dev-only secret says what it is in its own value; prod refuses to start with it.
inline constexpr const char* kDevCallbackSecret = "seatflow-dev-only-callback-secret-not-for-prod";
inline constexpr const char* kDevApiToken = "seatflow-dev-only-api-token";

// Active query (SPEC §10, README "Active query"): the gateways' addresses and the merchant keys
// that sign the requests; the scheduler's settings are the engine's (actors::QuerySettings).
struct QueryGateways {
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
  // SEATFLOW_WECHAT_MERCHANT_SERIAL. All three or none; with them SEATFLOW_WECHAT_APPID, the app
  // the Native orders are created for (SPEC §16).
  std::string wechat_gateway_url;
  std::string wechat_merchant_key_path;
  std::string wechat_merchant_serial;
  std::string wechat_appid;
  // Stripe's API (SPEC §13: PaymentIntent search, refunds, the balance-transaction bill):
  // SEATFLOW_STRIPE_API_KEY (a secret key, sk_… or rk_…; never logged; empty = Stripe is not
  // queried, refunded or reconciled) and SEATFLOW_STRIPE_API_URL (https://api.stripe.com unless
  // set).
  std::string stripe_api_key;
  std::string stripe_api_url;
};
inline constexpr std::size_t kQueryScheduleStepsMax = 100;

// The dev mock gateway as the settings choose it (README "Settings"); app/main.cpp hands it to the
// dev tooling (dev/mock_gateway.hpp), which only the server binary links.
struct MockGatewayConfig {
  bool enabled = false;  // SEATFLOW_MOCK_GATEWAY (dev profile only; the profile sets the default)
  // SEATFLOW_MOCK_GATEWAY_AUTO: a success callback after each payment created on `channel`.
  bool auto_pay = true;
  bool keeps_deadline = true;      // SEATFLOW_MOCK_GATEWAY_DEADLINE (SPEC §16)
  std::uint32_t delay_ms = 2'000;  // SEATFLOW_MOCK_GATEWAY_DELAY_MS: the automatic callback's
  domain::Channel channel = domain::Channel::hmac;  // SEATFLOW_MOCK_GATEWAY_CHANNEL
};

// The prod profile refuses an API token or JWT key shorter than this (guessable).
inline constexpr std::size_t kProdApiTokenBytesMin = 32;

// The prod profile refuses a retention horizon shorter than this: a callback-log row must outlive
// every gateway's retry window (Alipay about 25 h, WeChat Pay about 24 h).
inline constexpr std::int64_t kMinProdRetentionMs = 2LL * 24 * 3600 * 1000;

struct Config {
  Profile profile = Profile::dev;
  // Each module's settings, with the module's defaults; load_config parses the environment into
  // them. The engine's runtime parts (connections, dialects, counters) are set by main.
  http::HttpConfig http;
  http::ApiSettings api;
  actors::EngineSettings engine;
  QueryGateways query;
  MockGatewayConfig mock_gateway;
  // SIGTERM to exit, whatever the stores do; an uncommitted callback is never ACKed.
  std::uint32_t shutdown_ms_max = 15'000;
  std::string pg_dsn;
  std::string redis_url;
  // SEATFLOW_REDIS_SENTINELS, _MASTER_NAME, _FAILOVER_TIMEOUT_MS (SPEC §15); no addresses: none.
  persistence::RedisSentinels redis_sentinels;
  std::vector<std::string> callback_secrets;         // never logged
  std::string api_token;                             // never logged
  std::string api_jwt_key;                           // HS256 key of API JWTs; never logged
  std::int64_t api_jwt_lifetime_ms_max = 3'600'000;  // SEATFLOW_API_JWT_LIFETIME_MAX
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
  // One line per old setting name in use (app/setting_names.hpp), also written to stderr.
  std::vector<std::string> warnings;
};

// Builds and validates the configuration; `require_stores` demands a DSN and a Redis URL. A
// renamed setting is read under its new name, else under its old one; each old name in use is
// reported once, as one warning line (the new name wins when both are set).
[[nodiscard]] ConfigResult load_config(const SettingLookup& lookup, bool require_stores);

// The one place every Redis user of the process gets its endpoint from: SEATFLOW_REDIS_URL's
// password and db, and its host unless the sentinels name the primary. Needs a valid URL.
[[nodiscard]] persistence::RedisEndpoint redis_endpoint(const Config& config);

// Parses a duration such as "30d", "12h", "15m", "10s" or "500ms" into milliseconds.
[[nodiscard]] std::optional<std::int64_t> parse_duration_ms(const std::string& text);

[[nodiscard]] std::vector<std::string> split_list(const std::string& text, char separator);

}  // namespace seatflow::app

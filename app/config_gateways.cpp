// Reads the gateways' settings: the alipay and wechat channels, the webhook dialects' secrets
// (stripe, standard), the currency, active query and Stripe's API (see app/config_readers.hpp).
#include "app/config_readers.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "channels/stripe/stripe_query.hpp"
#include "codec/crypto.hpp"
#include "codec/text.hpp"
#include "net/http_client.hpp"

namespace seatflow::app::config_readers {
namespace {

// A setting that is set to something; an empty value counts as unset.
std::optional<std::string> non_empty(const SettingLookup& lookup, const char* name) {
  auto value = lookup(name);
  if (value && value->empty()) {
    return std::nullopt;
  }
  return value;
}

// "serial=pem-path,serial2=pem-path2"
std::vector<channels::WechatPlatformKeyPath> parse_platform_keys(const std::string& text) {
  std::vector<channels::WechatPlatformKeyPath> keys;
  for (const auto& entry : split_list(text, ',')) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) {
      throw ConfigError{"SEATFLOW_WECHAT_PLATFORM_KEYS entries must be serial=pem-path"};
    }
    keys.push_back({entry.substr(0, eq), entry.substr(eq + 1)});
  }
  if (keys.empty()) {
    throw ConfigError{"SEATFLOW_WECHAT_PLATFORM_KEYS lists no serial=pem-path"};
  }
  return keys;
}

// A gateway URL setting: empty when unset, else an absolute http(s) URL.
std::string read_url(const SettingLookup& lookup, const char* name) {
  const auto url = non_empty(lookup, name);
  if (!url) {
    return {};
  }
  if (const auto parsed = net::parse_url(*url); !parsed.ok()) {
    throw ConfigError{std::string(name) + "='" + *url + "': " + parsed.detail()};
  }
  return *url;
}

// A PEM private key setting whose file must load (checked once here; main loads it again).
std::string read_private_key_path(const SettingLookup& lookup, const char* name) {
  const auto path = non_empty(lookup, name);
  if (!path) {
    return {};
  }
  if (const auto key = codec::load_private_key_file(*path); !key.ok()) {
    throw ConfigError{std::string(name) + ": " + key.detail()};
  }
  return *path;
}

// SPEC §13: Stripe's API key (the error never quotes it) and base URL.
void read_stripe_api(const SettingLookup& lookup, Config& config) {
  auto& query = config.query;
  query.stripe_api_url = read_url(lookup, "SEATFLOW_STRIPE_API_URL");
  if (query.stripe_api_url.empty()) {
    query.stripe_api_url = std::string(channels::kStripeDefaultApiUrl);
  }
  const auto key = non_empty(lookup, "SEATFLOW_STRIPE_API_KEY");
  if (key && !channels::valid_stripe_api_key(*key)) {
    throw ConfigError{"SEATFLOW_STRIPE_API_KEY must be printable ASCII without spaces, at most " +
                      std::to_string(channels::kStripeApiKeyBytesMax) + " bytes"};
  }
  query.stripe_api_key = key.value_or("");
}

// SPEC §16: the app WeChat Pay's Native orders are created for, with the gateway and only then.
void read_wechat_appid(const SettingLookup& lookup, bool gateway_set, QueryGateways& query) {
  const auto appid = non_empty(lookup, "SEATFLOW_WECHAT_APPID");
  if (!appid && gateway_set) {
    throw ConfigError{
        "SEATFLOW_WECHAT_APPID (the app WeChat Pay orders are created for) is required with "
        "SEATFLOW_WECHAT_GATEWAY_URL"};
  }
  if (appid && !gateway_set) {
    throw ConfigError{"SEATFLOW_WECHAT_APPID needs SEATFLOW_WECHAT_GATEWAY_URL"};
  }
  if (appid && !codec::is_safe_code(*appid)) {
    throw ConfigError{"SEATFLOW_WECHAT_APPID='" + *appid +
                      "' must be letters, digits, '.', '_' or '-' (e.g. wx8888888888888888)"};
  }
  query.wechat_appid = appid.value_or("");
}

// SPEC §10: the alipay and wechat query dialects need their channel and every one of their keys.
void read_gateway_queries(const SettingLookup& lookup, Config& config) {
  read_stripe_api(lookup, config);
  auto& query = config.query;
  query.alipay_gateway_url = read_url(lookup, "SEATFLOW_ALIPAY_GATEWAY_URL");
  query.alipay_app_private_key_path =
      read_private_key_path(lookup, "SEATFLOW_ALIPAY_APP_PRIVATE_KEY");
  if (query.alipay_gateway_url.empty() != query.alipay_app_private_key_path.empty()) {
    throw ConfigError{
        "SEATFLOW_ALIPAY_GATEWAY_URL and SEATFLOW_ALIPAY_APP_PRIVATE_KEY go together"};
  }
  if (!query.alipay_gateway_url.empty() && !config.alipay) {
    throw ConfigError{
        "SEATFLOW_ALIPAY_GATEWAY_URL needs the alipay channel (SEATFLOW_ALIPAY_APP_ID)"};
  }
  query.wechat_gateway_url = read_url(lookup, "SEATFLOW_WECHAT_GATEWAY_URL");
  query.wechat_merchant_key_path = read_private_key_path(lookup, "SEATFLOW_WECHAT_MERCHANT_KEY");
  query.wechat_merchant_serial = non_empty(lookup, "SEATFLOW_WECHAT_MERCHANT_SERIAL").value_or("");
  const int wechat_set = !query.wechat_gateway_url.empty() +
                         !query.wechat_merchant_key_path.empty() +
                         !query.wechat_merchant_serial.empty();
  if (wechat_set != 0 && wechat_set != 3) {
    throw ConfigError{
        "SEATFLOW_WECHAT_GATEWAY_URL, SEATFLOW_WECHAT_MERCHANT_KEY and "
        "SEATFLOW_WECHAT_MERCHANT_SERIAL go together"};
  }
  if (wechat_set == 3 && !config.wechat) {
    throw ConfigError{
        "SEATFLOW_WECHAT_GATEWAY_URL needs the wechat channel (SEATFLOW_WECHAT_MCHID)"};
  }
  read_wechat_appid(lookup, wechat_set == 3, query);
}

// An ISO 4217 alphabetic code.
constexpr std::size_t kCurrencyCodeChars = 3;

// SEATFLOW_CURRENCY: three ASCII letters, kept in lower case (Stripe writes currencies so).
void read_currency(const SettingLookup& lookup, Config& config) {
  const auto raw = non_empty(lookup, "SEATFLOW_CURRENCY");
  if (!raw) {
    return;
  }
  std::string currency;
  for (const char c : *raw) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      break;
    }
    currency.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c));
  }
  if (currency.size() != kCurrencyCodeChars || raw->size() != kCurrencyCodeChars) {
    throw ConfigError{"SEATFLOW_CURRENCY='" + *raw +
                      "' must be a 3-letter ISO 4217 code, e.g. cny"};
  }
  config.currency = std::move(currency);
}

// A comma-separated secret list; the error names the setting and a position, never a value.
std::optional<std::vector<std::string>> read_secret_list(const SettingLookup& lookup,
                                                         const char* name) {
  const auto raw = non_empty(lookup, name);
  if (!raw) {
    return std::nullopt;
  }
  auto secrets = split_list(*raw, ',');
  if (secrets.empty()) {
    throw ConfigError{std::string(name) + " is set but lists no secret"};
  }
  if (secrets.size() > channels::kWebhookSecretsMax) {
    throw ConfigError{std::string(name) + " lists more than " +
                      std::to_string(channels::kWebhookSecretsMax) + " secrets"};
  }
  return secrets;
}

void require_prod_length(const Config& config, const char* name, std::size_t position,
                         std::size_t bytes) {
  if (config.profile == Profile::prod && bytes < kMinProdSecretBytes) {
    throw ConfigError{std::string(name) + ": secret " + std::to_string(position) + " is under " +
                      std::to_string(kMinProdSecretBytes) + " bytes; prod refuses it"};
  }
}

}  // namespace

void read_alipay(const SettingLookup& lookup, Config& config) {
  const auto app_id = non_empty(lookup, "SEATFLOW_ALIPAY_APP_ID");
  const auto key_path = non_empty(lookup, "SEATFLOW_ALIPAY_PUBLIC_KEY");
  const auto seller_id = non_empty(lookup, "SEATFLOW_ALIPAY_SELLER_ID");
  if (!app_id && !key_path && !seller_id) {
    return;
  }
  if (!app_id) {
    throw ConfigError{"SEATFLOW_ALIPAY_APP_ID is required when another SEATFLOW_ALIPAY_* is set"};
  }
  if (!key_path) {
    throw ConfigError{
        "SEATFLOW_ALIPAY_PUBLIC_KEY (PEM file of Alipay's public key) is required "
        "when SEATFLOW_ALIPAY_APP_ID is set"};
  }
  channels::AlipayConfig alipay{*app_id, seller_id.value_or(""), *key_path};
  if (const auto channel = channels::make_alipay_channel(alipay); !channel.ok()) {
    throw ConfigError{"SEATFLOW_ALIPAY_PUBLIC_KEY: " + channel.detail()};
  }
  config.alipay = std::move(alipay);
}

void read_wechat(const SettingLookup& lookup, Config& config) {
  const auto mchid = non_empty(lookup, "SEATFLOW_WECHAT_MCHID");
  const auto apiv3_key = non_empty(lookup, "SEATFLOW_WECHAT_APIV3_KEY");
  const auto keys = non_empty(lookup, "SEATFLOW_WECHAT_PLATFORM_KEYS");
  if (!mchid && !apiv3_key && !keys) {
    return;
  }
  for (const auto& [value, name] : {std::pair{&mchid, "SEATFLOW_WECHAT_MCHID"},
                                    std::pair{&apiv3_key, "SEATFLOW_WECHAT_APIV3_KEY"},
                                    std::pair{&keys, "SEATFLOW_WECHAT_PLATFORM_KEYS"}}) {
    if (!*value) {
      throw ConfigError{std::string(name) + " is required when another SEATFLOW_WECHAT_* is set"};
    }
  }
  if (apiv3_key->size() != codec::kAesGcmKeyBytes) {
    // The length only: the key itself is a secret.
    throw ConfigError{"SEATFLOW_WECHAT_APIV3_KEY must be exactly 32 bytes (it has " +
                      std::to_string(apiv3_key->size()) + ")"};
  }
  channels::WechatConfig wechat{*mchid, *apiv3_key, parse_platform_keys(*keys),
                                config.callback_window_ms};
  if (const auto channel = channels::make_wechat_channel(wechat); !channel.ok()) {
    throw ConfigError{"SEATFLOW_WECHAT_PLATFORM_KEYS: " + channel.detail()};
  }
  config.wechat = std::move(wechat);
}

void read_query(const SettingLookup& lookup, Config& config) {
  auto& query = config.engine.query;
  auto& client = config.engine.query_client;
  using u32 = std::uint32_t;
  query.enabled = read_switch(lookup, "SEATFLOW_QUERY", query.enabled);
  if (const auto raw = lookup("SEATFLOW_QUERY_SCHEDULE")) {
    query.schedule_ms.clear();
    for (const auto& step : split_list(*raw, ',')) {
      const auto ms = parse_duration_ms(step);
      if (!ms || *ms < 100 || *ms > 7LL * 24 * 3600 * 1000) {
        throw ConfigError{"SEATFLOW_QUERY_SCHEDULE='" + *raw +
                          "' must list durations from 100ms to 7d, e.g. 60s,5m,5m"};
      }
      query.schedule_ms.push_back(static_cast<u32>(*ms));
    }
    if (query.schedule_ms.empty() || query.schedule_ms.size() > kQueryScheduleStepsMax) {
      throw ConfigError{"SEATFLOW_QUERY_SCHEDULE must list 1 to " +
                        std::to_string(kQueryScheduleStepsMax) + " steps"};
    }
  }
  read_number<u32>(lookup, "SEATFLOW_QUERY_RATE_PER_S", query.rate_per_s, 1, 10'000);
  read_number<std::size_t>(lookup, "SEATFLOW_QUERY_BATCH_PAYMENTS_MAX", query.batch, 1, 10'000);
  read_number<u32>(lookup, "SEATFLOW_QUERY_TICK_MS", query.tick_ms, 10, 600'000);
  read_number<u32>(lookup, "SEATFLOW_QUERY_CONNECT_TIMEOUT_MS", client.connect_timeout_ms, 1,
                   net::kTimeoutMsMax);
  read_number<u32>(lookup, "SEATFLOW_QUERY_TIMEOUT_MS", client.total_timeout_ms, 1,
                   net::kTimeoutMsMax);
  if (client.total_timeout_ms < client.connect_timeout_ms) {
    throw ConfigError{
        "SEATFLOW_QUERY_TIMEOUT_MS must be at least SEATFLOW_QUERY_CONNECT_TIMEOUT_MS"};
  }
  read_number<std::size_t>(lookup, "SEATFLOW_QUERY_RESPONSE_BYTES_MAX", client.response_bytes_max,
                           1024, net::kResponseBytesMax);
  config.engine.query_ca_file = lookup("SEATFLOW_QUERY_CA_FILE").value_or("");
  if (const auto url = lookup("SEATFLOW_HMAC_GATEWAY_URL")) {
    if (const auto parsed = net::parse_url(*url); !url->empty() && !parsed.ok()) {
      throw ConfigError{"SEATFLOW_HMAC_GATEWAY_URL='" + *url + "': " + parsed.detail()};
    }
    config.query.hmac_gateway_url = *url;
  } else if (config.mock_gateway.enabled) {
    config.query.hmac_gateway_url =
        "http://" + config.http.host + ":" + std::to_string(config.http.port);
  }
  read_gateway_queries(lookup, config);
}

void read_webhooks(const SettingLookup& lookup, Config& config) {
  read_currency(lookup, config);
  constexpr const char* kStripe = "SEATFLOW_STRIPE_WEBHOOK_SECRETS";
  if (auto secrets = read_secret_list(lookup, kStripe)) {
    for (std::size_t i = 0; i < secrets->size(); ++i) {
      require_prod_length(config, kStripe, i + 1, (*secrets)[i].size());
    }
    config.stripe =
        channels::StripeConfig{std::move(*secrets), config.currency, config.callback_window_ms};
  }
  constexpr const char* kStandard = "SEATFLOW_STANDARD_WEBHOOK_SECRETS";
  if (auto secrets = read_secret_list(lookup, kStandard)) {
    for (std::size_t i = 0; i < secrets->size(); ++i) {
      const auto key = channels::standard_secret_key((*secrets)[i]);
      if (!key) {
        throw ConfigError{std::string(kStandard) + ": secret " + std::to_string(i + 1) +
                          " is not whsec_ followed by base64"};
      }
      require_prod_length(config, kStandard, i + 1, key->size());
    }
    config.standard = channels::StandardConfig{std::move(*secrets), config.callback_window_ms};
  }
  if (const auto mock = non_empty(lookup, "SEATFLOW_MOCK_GATEWAY_CHANNEL")) {
    const auto channel = domain::parse_channel(*mock);
    if (!channel || *channel == domain::Channel::alipay || *channel == domain::Channel::wechat) {
      throw ConfigError{"SEATFLOW_MOCK_GATEWAY_CHANNEL='" + *mock +
                        "' must be hmac, stripe or standard"};
    }
    if ((*channel == domain::Channel::stripe && !config.stripe) ||
        (*channel == domain::Channel::standard && !config.standard)) {
      throw ConfigError{"SEATFLOW_MOCK_GATEWAY_CHANNEL=" + *mock + " needs SEATFLOW_" +
                        (*channel == domain::Channel::stripe ? "STRIPE" : "STANDARD") +
                        "_WEBHOOK_SECRETS"};
    }
    config.mock_gateway.channel = *channel;
  }
}

}  // namespace seatflow::app::config_readers

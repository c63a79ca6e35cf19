// What app/config.cpp, app/config_gateways.cpp and app/config_redis.cpp share while they read the
// settings: the error that refuses one, the number and switch readers, and the gateways' and the
// sentinels' readers. Internal to those files; the rest of the tree calls load_config
// (app/config.hpp).
#pragma once

#include <charconv>
#include <string>
#include <system_error>

#include "app/config.hpp"

namespace seatflow::app::config_readers {

// A refused setting; `message` names the setting and the reason (load_config's error line).
struct ConfigError {
  std::string message;
};

// `name`'s whole number into `target` when it is set; ConfigError when it is not one within
// [min_value, max_value].
template <class T>
void read_number(const SettingLookup& lookup, const std::string& name, T& target, T min_value,
                 T max_value) {
  const auto raw = lookup(name);
  if (!raw) {
    return;
  }
  T value{};
  const auto* end = raw->data() + raw->size();
  const auto [ptr, ec] = std::from_chars(raw->data(), end, value);
  if (ec != std::errc{} || ptr != end) {
    throw ConfigError{name + "='" + *raw + "' is not a whole number"};
  }
  if (value < min_value || value > max_value) {
    throw ConfigError{name + "=" + *raw + " is out of range [" + std::to_string(min_value) + ", " +
                      std::to_string(max_value) + "]"};
  }
  target = value;
}

// on|true|1 or off|false|0; `fallback` when unset, ConfigError for anything else.
[[nodiscard]] bool read_switch(const SettingLookup& lookup, const std::string& name, bool fallback);

// The gateways' settings (app/config_gateways.cpp); each throws ConfigError on a refused one.
// SEATFLOW_ALIPAY_*: the alipay channel, its public key loaded once to check it.
void read_alipay(const SettingLookup& lookup, Config& config);
// SEATFLOW_WECHAT_MCHID, _APIV3_KEY and _PLATFORM_KEYS: the wechat channel (all three or none).
void read_wechat(const SettingLookup& lookup, Config& config);
// SEATFLOW_CURRENCY, the stripe and standard webhook secrets, SEATFLOW_MOCK_GATEWAY_CHANNEL.
void read_webhooks(const SettingLookup& lookup, Config& config);
// Active query (SPEC §10): the scheduler, its HTTP client and the gateways' addresses and keys;
// after read_alipay and read_wechat, whose channels the query dialects need.
void read_query(const SettingLookup& lookup, Config& config);
// Redis Sentinel (SPEC §15, app/config_redis.cpp): SEATFLOW_REDIS_SENTINELS, _MASTER_NAME,
// _FAILOVER_TIMEOUT_MS and the relay's SEATFLOW_REDIS_REPLICAS_ACK; after read_store_deadlines
// and read_events.
void read_redis_sentinels(const SettingLookup& lookup, Config& config);
// SEATFLOW_BILL_*: bill reconciliation (SPEC §13; app/config_bill.cpp).
void read_bill(const SettingLookup& lookup, Config& config);
// SPEC §16 (app/config_payment_gateway.cpp): SEATFLOW_NOTIFY_BASE_URL, SEATFLOW_GATEWAY_CALLERS,
// SEATFLOW_GATEWAY_CLOSE and SEATFLOW_CLOSE_GRACE_MS; after read_query (the gateways it needs).
void read_payment_gateway(const SettingLookup& lookup, Config& config);

}  // namespace seatflow::app::config_readers

// SPEC §16: the payment at its gateway: SEATFLOW_NOTIFY_BASE_URL, SEATFLOW_GATEWAY_CALLERS,
// SEATFLOW_GATEWAY_CLOSE (dev only off), SEATFLOW_CLOSE_GRACE_MS and SEATFLOW_AUTO_REFUND.
#include "app/config_readers.hpp"
#include "net/message.hpp"

namespace seatflow::app::config_readers {

namespace {

// The channels whose creation names SeatFlow's notify URL, configured with a gateway here.
bool needs_notify_url(const Config& config) {
  return !config.query.hmac_gateway_url.empty() ||
         (config.alipay && !config.query.alipay_gateway_url.empty()) ||
         (config.wechat && !config.query.wechat_gateway_url.empty());
}

}  // namespace

void read_payment_gateway(const SettingLookup& lookup, Config& config) {
  auto& gateway = config.engine.gateway;
  const bool dev = config.profile == Profile::dev;
  constexpr const char* kBase = "SEATFLOW_NOTIFY_BASE_URL";
  if (const auto base = lookup(kBase); base && !base->empty()) {
    const auto parsed = net::parse_url(*base);
    if (!parsed.ok()) {
      throw ConfigError{std::string(kBase) + "='" + *base + "': " + parsed.detail()};
    }
    if (!dev && !parsed.value().tls) {
      throw ConfigError{std::string(kBase) + " must be an https:// address in the prod profile"};
    }
    gateway.notify_base_url = *base;
  } else if (dev) {
    gateway.notify_base_url = "http://" + config.http.host + ":" + std::to_string(config.http.port);
  } else if (needs_notify_url(config)) {
    throw ConfigError{std::string(kBase) +
                      " is required in the prod profile: the hmac, alipay and wechat gateways are "
                      "told where to send their notifications"};
  }
  read_number<std::size_t>(lookup, "SEATFLOW_GATEWAY_CALLERS", gateway.callers, 1, 64);
  read_number<std::uint32_t>(lookup, "SEATFLOW_CLOSE_GRACE_MS", gateway.close_grace_ms, 0,
                             86'400'000);
  gateway.create_enabled = read_switch(lookup, "SEATFLOW_GATEWAY_CREATE", true);
  gateway.close_enabled = read_switch(lookup, "SEATFLOW_GATEWAY_CLOSE", true);
  auto& automatic = config.engine.auto_refund;
  if (const auto mode = lookup("SEATFLOW_AUTO_REFUND")) {
    if (*mode != "off" && *mode != "paid_after_cancel") {
      throw ConfigError{"SEATFLOW_AUTO_REFUND='" + *mode + "' is not off or paid_after_cancel"};
    }
    automatic.enabled = *mode == "paid_after_cancel";
  }
  read_number<std::uint32_t>(lookup, "SEATFLOW_AUTO_REFUND_INTERVAL_MS", automatic.interval_ms, 100,
                             3'600'000);
  if (!gateway.close_enabled && !dev) {
    throw ConfigError{"SEATFLOW_GATEWAY_CLOSE=off is refused in the prod profile"};
  }
}

}  // namespace seatflow::app::config_readers

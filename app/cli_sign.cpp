// `seatflow sign`: a callback signed as its gateway would sign it, and a ready curl line. The hmac
// dialect is signed here; the others by app/gateway_sign.cpp.
#include <iostream>
#include <string>

#include "app/cli.hpp"
#include "channels/hmac/hmac_channel.hpp"
#include "domain/clock.hpp"

namespace seatflow::app {

int cli_sign(const CliOverrides& overrides, SignOptions options) {
  const auto config = load_for_command(overrides, false);
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
    return run_gateway_sign(options.gateway, *config, std::cout, std::cerr);
  }
  const auto now_ms = domain::unix_time_ms();
  const auto callback_id = options.callback_id.empty()
                               ? "cb-" + options.payment_no + "-" + std::to_string(now_ms)
                               : options.callback_id;
  const channels::HmacChannel channel(
      channels::HmacConfig{config->callback_secrets, config->callback_window_ms});
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

}  // namespace seatflow::app

// `seatflow sign --channel alipay|wechat|stripe|standard`: prints a notify signed as the gateway
// would sign it (body, the dialect's headers) and a ready curl line. An operators' and developers'
// tool.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "app/config.hpp"

namespace seatflow::app {

struct GatewaySignOptions {
  std::string channel;            // "alipay", "wechat", "stripe" or "standard"
  std::string private_key_path;   // the gateway's private key (PEM), the pair of the configured key
  std::string payment_no;         // out_trade_no
  std::int64_t timestamp_ms = 0;  // 0: now
  bool body_only = false;
  // alipay; app_id defaults to SEATFLOW_ALIPAY_APP_ID
  std::string app_id;
  std::string amount = "50.00";  // total_amount in yuan
  std::string trade_status = "TRADE_SUCCESS";
  std::string trade_no;   // default: generated
  std::string notify_id;  // default: generated
  std::string charset = "utf-8";
  // wechat; mchid, APIv3 key and serial default to SEATFLOW_WECHAT_* (the first serial)
  std::string serial;
  std::string apiv3_key;
  std::string mchid;
  std::string trade_state = "SUCCESS";
  std::int64_t amount_fen = 5000;
  std::string transaction_id;  // default: generated
  std::string id;              // notification id; default: generated
  // stripe and standard: signed with the first configured webhook secret; no private key
  int status = 1;           // 1 success, 2 failure
  std::string callback_id;  // event id / webhook-id; default: generated
  std::int64_t amount_cents = 5000;
  std::string event_type;  // overrides the type that `status` picks
};

// Writes the signed request to `out`, or one line naming the problem to `err`. Returns the exit
// code: 0, or 2 for a missing or unusable option.
[[nodiscard]] int run_gateway_sign(const GatewaySignOptions& options, const Config& config,
                                   std::ostream& out, std::ostream& err);

}  // namespace seatflow::app

// The gateway channels a serving engine (and `seatflow query`) verifies callbacks of, and the
// query (SPEC §10), refund (SPEC §12), bill (SPEC §13) and payment (SPEC §16) dialects of those
// whose gateway URL is configured.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "channels/bill.hpp"
#include "channels/payment_gateway.hpp"
#include "channels/query.hpp"
#include "channels/refund.hpp"
#include "channels/registry.hpp"

namespace seatflow::app {

// Every kind speaks to the same gateway with the same keys.
struct GatewayDialects {
  std::vector<std::shared_ptr<const channels::QueryDialect>> query;
  std::vector<std::shared_ptr<const channels::RefundDialect>> refund;
  std::vector<std::shared_ptr<const channels::BillDialect>> bill;  // SPEC §13
  // SPEC §16: create the payment at the gateway, close it there.
  std::vector<std::shared_ptr<const channels::PaymentGatewayDialect>> payment;
};

// Adds every channel callbacks are verified by to `registry`: hmac, then the configured
// alipay/wechat/stripe/standard ones; their names, comma-separated, in `names`. The key files were
// checked while the configuration loaded; false (after one line on stderr) only when one changed
// since.
[[nodiscard]] bool add_channels(const Config& config, channels::Registry& registry,
                                std::string& names);

// The dialects of the channels in `registry` whose gateway URL is configured. Throws
// std::runtime_error when a key file can no longer be read (the configuration checked them).
[[nodiscard]] GatewayDialects gateway_dialects(const Config& config,
                                               const channels::Registry& registry);

}  // namespace seatflow::app

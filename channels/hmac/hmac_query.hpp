// The `hmac` gateway's query dialect (SPEC §10): GET {base}/api/gateway/payments/{paymentNo},
// answered 200 with a §5 body (callbackId `query:<paymentNo>:<1|2>`) signed and verified like a
// callback, 202 while the payment is pending, 404 when the gateway does not know it.
#pragma once

#include "channels/hmac/hmac_channel.hpp"
#include "channels/query.hpp"

namespace seatflow::channels {

// The path of the query endpoint under the gateway's base URL.
inline constexpr std::string_view kHmacQueryPath = "/api/gateway/payments/";

class HmacQuery final : public QueryDialect {
 public:
  // `verifier` holds the callback secrets and outlives this; `gateway` is the base URL
  // (SEATFLOW_HMAC_GATEWAY_URL).
  HmacQuery(const HmacChannel& verifier, net::Url gateway);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::hmac; }
  [[nodiscard]] net::Request request(const QueryTarget& target, std::int64_t now_ms) const override;
  [[nodiscard]] Result<QueryAnswer> answer(const QueryTarget& target, const net::Response& response,
                                           std::int64_t now_ms) const override;

 private:
  const HmacChannel& verifier_;
  net::Url gateway_;
};

}  // namespace seatflow::channels

// hmac query: the request path, and the answer verified by the hmac channel's own verify().
#include "channels/hmac/hmac_query.hpp"

namespace seatflow::channels {

HmacQuery::HmacQuery(const HmacChannel& verifier, net::Url gateway)
    : verifier_(verifier), gateway_(std::move(gateway)) {
  gateway_.target = net::base_path(std::move(gateway_.target));
}

net::Request HmacQuery::request(const QueryTarget& target, std::int64_t /*now_ms*/) const {
  net::Request request;
  request.method = "GET";
  request.url = gateway_;
  request.url.target = gateway_.target + std::string(kHmacQueryPath) + target.payment_no;
  request.headers = {{"Accept", "application/json"}};
  return request;
}

Result<QueryAnswer> HmacQuery::answer(const QueryTarget& target, const net::Response& response,
                                      std::int64_t now_ms) const {
  // Pending and not found change nothing, so they need no signature.
  if (response.status == 202) {
    return QueryAnswer{QueryState::pending, {}, {}};
  }
  if (response.status == 404) {
    return QueryAnswer{QueryState::not_found, {}, {}};
  }
  if (response.status != 200) {
    return rejected_answer("unexpected HTTP status " + std::to_string(response.status));
  }
  const codec::Headers headers;
  const auto verified = verifier_.verify(InboundRequest{response.body, &headers, now_ms});
  if (!verified.ok()) {
    return rejected_answer("answer rejected: " + verified.detail());
  }
  const auto& callback = verified.value();
  if (callback.payment_no != target.payment_no) {
    return rejected_answer("the answer names another payment");
  }
  const auto state =
      callback.kind == domain::CallbackKind::success ? QueryState::paid : QueryState::failed;
  if (callback.callback_id != query_callback_id(target.payment_no, state)) {
    return rejected_answer("the answer's callbackId is not the query's");
  }
  return QueryAnswer{state, {}, {}};
}

}  // namespace seatflow::channels

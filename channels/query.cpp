// The channel-independent part of active query: names, callback ids and the callback an answer is.
#include "channels/query.hpp"

#include "codec/digest.hpp"

namespace seatflow::channels {

std::string_view to_string(QueryState state) {
  switch (state) {
    case QueryState::paid:
      return "paid";
    case QueryState::failed:
      return "failed";
    case QueryState::pending:
      return "pending";
    case QueryState::not_found:
      return "not_found";
  }
  return "pending";
}

std::string query_callback_id(std::string_view payment_no, QueryState state) {
  std::string id = "query:";
  id.append(payment_no);
  id.append(state == QueryState::paid ? ":1" : ":2");
  return id;
}

std::optional<domain::VerifiedCallback> callback_of(const QueryTarget& target,
                                                    domain::Channel channel,
                                                    const QueryAnswer& answer) {
  if (answer.state != QueryState::paid && answer.state != QueryState::failed) {
    return std::nullopt;
  }
  domain::VerifiedCallback callback;
  callback.callback_id = query_callback_id(target.payment_no, answer.state);
  callback.payment_no = target.payment_no;
  callback.channel = channel;
  callback.kind = answer.state == QueryState::paid ? domain::CallbackKind::success
                                                   : domain::CallbackKind::failure;
  callback.amount_cents = answer.amount_cents;
  callback.channel_trade_no = answer.trade_no;
  callback.payload_sha256 = codec::business_digest(callback);
  return callback;
}

}  // namespace seatflow::channels

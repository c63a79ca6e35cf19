// The order store's and the callback log's rows as JSON: one function per row type, null for what
// the row does not hold.
#include "http/api_json.hpp"

#include <cassert>
#include <utility>

#include "codec/crypto.hpp"
#include "codec/text.hpp"

namespace seatflow::http {
namespace {

using nlohmann::json;

template <class T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json callback_detail(const persistence::CallbackRow& row) {
  return {{"callbackId", row.callback_id},
          {"channel", or_null(row.channel)},
          {"status", or_null(row.status)},
          {"result", or_null(row.result)},
          {"httpStatus", or_null(row.http_status)},
          {"duplicateCount", row.duplicate_count},
          {"lastDuplicateAt", or_null(row.last_duplicate_at)}};
}

json query_detail(const persistence::QueryEntry& query) {
  return {{"attempts", query.attempts},
          {"lastResult", or_null(query.last_result)},
          {"nextAt", or_null(query.next_at)}};
}

json event_detail(const persistence::EventEntry& event) {
  return {{"type", event.type},
          {"eventId", event.event_id},
          {"orderNo", or_null(event.order_no)},
          {"amountCents", or_null(event.amount_cents)},
          {"detail", or_null(event.detail)}};
}

json discrepancy_detail(const persistence::DiscrepancyEntry& discrepancy) {
  return {{"id", discrepancy.id},
          {"kind", discrepancy.kind},
          {"detail", json::parse(discrepancy.detail)},
          {"resolvedAt", or_null(discrepancy.resolved_at)}};
}

// The status names the API shows beside the codes (domain::PaymentStatus, domain::OrderStatus).
constexpr std::string_view kPaymentStatusNames[] = {"PENDING", "SUCCESS", "FAILED", "CLOSED",
                                                    "REFUNDED"};
constexpr std::string_view kOrderStatusNames[] = {"PENDING", "PAID", "CANCELLED", "REFUNDED",
                                                  "PARTIALLY_REFUNDED"};

template <std::size_t N>
std::string_view status_name(const std::string_view (&names)[N], std::int64_t code) {
  // The columns' CHECK constraints hold the codes in range.
  assert(code >= 0 && static_cast<std::size_t>(code) < N);
  return names[static_cast<std::size_t>(code)];
}

json refund_json(const persistence::DiscrepancyRefundRow& refund) {
  return {{"status", refund.status},
          {"reason", or_null(refund.reason)},
          {"refundNo", refund.refund_no},
          {"gatewayRefundNo", or_null(refund.gateway_refund_no)},
          {"attempts", refund.attempts},
          {"startedAt", refund.started_at},
          {"finishedAt", or_null(refund.finished_at)}};
}

}  // namespace

json to_json(const persistence::OrderRow& row) {
  return {{"orderNo", row.order_no},
          {"userId", or_null(row.user_id)},
          {"showId", row.show_id},
          {"seatIds", row.seat_ids},
          {"amountCents", row.amount_cents},
          {"statusCode", row.status},
          {"status", status_name(kOrderStatusNames, row.status)},
          {"expiresAt", or_null(row.expires_at)},
          {"createdAt", row.created_at},
          {"updatedAt", row.updated_at},
          {"paymentNo", or_null(row.payment_no)}};
}

json to_json(const persistence::PaymentRow& row) {
  return {{"paymentNo", row.payment_no},
          {"orderNo", row.order_no},
          {"channel", row.channel},
          {"amountCents", row.amount_cents},
          {"statusCode", row.status},
          {"status", status_name(kPaymentStatusNames, row.status)},
          {"channelTradeNo", or_null(row.channel_trade_no)},
          {"paidAt", or_null(row.paid_at)},
          {"createdAt", row.created_at},
          {"updatedAt", row.updated_at},
          {"orderStatusCode", row.order_status},
          {"orderStatus", status_name(kOrderStatusNames, row.order_status)},
          // SPEC §16: how the customer pays, once the gateway created the payment.
          {"pay", row.pay ? json::parse(*row.pay) : json(nullptr)},
          {"gatewayRef", or_null(row.gateway_ref)}};
}

json to_json(const persistence::DiscrepancyRow& row) {
  return {{"id", row.id},
          {"paymentNo", row.payment_no},
          {"orderNo", or_null(row.order_no)},
          {"kind", row.kind},
          {"detail", json::parse(row.detail)},
          {"createdAt", row.created_at},
          {"resolvedAt", or_null(row.resolved_at)},
          {"refund", row.refund ? refund_json(*row.refund) : json(nullptr)}};
}

json to_json(const std::vector<persistence::DiscrepancyRow>& rows) {
  json listed = json::array();
  for (const auto& row : rows) {
    listed.push_back(to_json(row));
  }
  return listed;
}

json to_json(const persistence::ResolvedDiscrepancy& resolved) {
  return {{"id", resolved.id}, {"resolved", true}};
}

json to_json(const persistence::CallbackRow& row) {
  auto body = callback_detail(row);
  body["paymentNo"] = or_null(row.payment_no);
  body["orderNo"] = or_null(row.order_no);
  body["receivedAt"] = row.received_at;
  return body;
}

json to_json(const persistence::CallbackPage& page) {
  json callbacks = json::array();
  for (const auto& row : page.callbacks) {
    callbacks.push_back(to_json(row));
  }
  return {{"callbacks", std::move(callbacks)}, {"nextCursor", or_null(page.next_cursor)}};
}

json to_json(const persistence::CallbackDetail& detail) {
  auto body = to_json(detail.row);
  if (!detail.raw_body) {
    body["rawBody"] = nullptr;
  } else if (codec::is_valid_utf8(*detail.raw_body)) {
    body["rawBody"] = *detail.raw_body;
  } else {
    // JSON carries text: a body that is not UTF-8 goes as base64 instead.
    body["rawBodyBase64"] = codec::base64_encode(*detail.raw_body);
  }
  body["rawHeaders"] =
      detail.raw_headers.empty() ? json::object() : json::parse(detail.raw_headers);
  return body;
}

json to_json(const persistence::TimelineEntry& entry) {
  json detail = std::visit(
      [](const auto& kind) -> json {
        using T = std::decay_t<decltype(kind)>;
        if constexpr (std::is_same_v<T, persistence::CallbackRow>) {
          return callback_detail(kind);
        } else if constexpr (std::is_same_v<T, persistence::QueryEntry>) {
          return query_detail(kind);
        } else if constexpr (std::is_same_v<T, persistence::EventEntry>) {
          return event_detail(kind);
        } else {
          return discrepancy_detail(kind);
        }
      },
      entry.detail);
  return {{"at", entry.at},
          {"kind", std::string(persistence::kind_of(entry))},
          {"detail", std::move(detail)}};
}

}  // namespace seatflow::http

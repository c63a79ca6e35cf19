// The API's JSON: the order store's and the callback log's typed rows as the API answers them
// (SPEC §7, §12). Keys as the console (web/console/*.js) reads them; nlohmann::json sorts an
// object's keys, the order the API has always answered in.
#pragma once

#include <nlohmann/json.hpp>

#include "persistence/stores/callback_log.hpp"
#include "persistence/stores/order_store.hpp"

namespace seatflow::http {

// {"orderNo", "userId", "showId", "seatIds", "amountCents", "statusCode", "status", "expiresAt",
//  "createdAt", "updatedAt", "paymentNo"}
[[nodiscard]] nlohmann::json to_json(const persistence::OrderRow& row);
// {"paymentNo", "orderNo", "channel", "amountCents", "statusCode", "status", "channelTradeNo",
//  "paidAt", "createdAt", "updatedAt", "orderStatusCode", "orderStatus"}
[[nodiscard]] nlohmann::json to_json(const persistence::PaymentRow& row);
// {"id", "paymentNo", "orderNo", "kind", "detail", "createdAt", "resolvedAt", "refund"}; the refund
// {"status", "reason", "refundNo", "gatewayRefundNo", "attempts", "startedAt", "finishedAt"} or
// null.
[[nodiscard]] nlohmann::json to_json(const persistence::DiscrepancyRow& row);
// An array of the rows, in their order.
[[nodiscard]] nlohmann::json to_json(const std::vector<persistence::DiscrepancyRow>& rows);
// {"id", "resolved": true}
[[nodiscard]] nlohmann::json to_json(const persistence::ResolvedDiscrepancy& resolved);

// {"callbackId", "paymentNo", "orderNo", "channel", "status", "result", "httpStatus",
//  "duplicateCount", "receivedAt", "lastDuplicateAt"}
[[nodiscard]] nlohmann::json to_json(const persistence::CallbackRow& row);
// {"callbacks": [...], "nextCursor": "..." | null}
[[nodiscard]] nlohmann::json to_json(const persistence::CallbackPage& page);
// The row with its raw request: "rawBody" text, or "rawBodyBase64" when it is not UTF-8, and
// "rawHeaders".
[[nodiscard]] nlohmann::json to_json(const persistence::CallbackDetail& detail);
// {"at", "kind", "detail"}; the detail's keys depend on the kind.
[[nodiscard]] nlohmann::json to_json(const persistence::TimelineEntry& entry);

}  // namespace seatflow::http

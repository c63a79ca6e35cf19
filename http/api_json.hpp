// The API's JSON: the callback log's typed rows as the API answers them (SPEC §12). Keys as the
// console (web/console/*.js) reads them; nlohmann::json sorts an object's keys, the order the API
// has always answered in.
#pragma once

#include <nlohmann/json.hpp>

#include "persistence/callback_log.hpp"

namespace seatflow::http {

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

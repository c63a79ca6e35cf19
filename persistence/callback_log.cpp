// Callback search, one callback with its raw request, and a payment's timeline (SPEC §12).
#include "persistence/callback_log.hpp"

#include <spdlog/spdlog.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <pqxx/binarystring>

#include "channels/crypto.hpp"
#include "channels/text.hpp"
#include "domain/types.hpp"
#include "persistence/events.hpp"

namespace seatflow::persistence {
namespace {

using nlohmann::json;

// One row per callback; the summary a search page lists. cursorUs is the exact received_at in
// epoch microseconds (the keyset of the page).
constexpr const char* kCallbackSummary =
    "json_build_object('callbackId', l.callback_id, 'paymentNo', l.payment_no, "
    "  'orderNo', p.order_no, 'channel', l.channel, 'status', l.status, 'result', l.result, "
    "  'httpStatus', l.http_status, 'duplicateCount', l.duplicate_count, "
    "  'receivedAt', l.received_at, 'lastDuplicateAt', l.last_duplicate_at, "
    "  'cursorUs', ((extract(epoch FROM l.received_at) * 1000000)::bigint))";

// Each filter is either its "any" value or a condition; the statement is planned with the values
// (unnamed, custom plans), so the "any" branches fold away and payment_no, the order's unique
// index and received_at keep their indexes. Newest first, callback_id breaking ties (one batch
// shares its transaction's now()); one row beyond the page says whether a next page exists.
const std::string kSearchCallbacks =
    std::string("SELECT ") + kCallbackSummary +
    "::text "
    "FROM payment_callback_log l "
    "LEFT JOIN payment_order p ON p.payment_no = l.payment_no "
    "WHERE ($1 = '' OR l.payment_no = $1) "
    "  AND ($2 = '' OR p.order_no = $2) "
    "  AND ($3 = '' OR l.callback_id = $3) "
    "  AND ($4 = '' OR l.channel = $4) "
    "  AND ($5 = '' OR ($5 = 'duplicate' AND l.duplicate_count > 0) "
    "       OR l.result = $5) "
    "  AND l.received_at >= $6::timestamptz "
    "  AND l.received_at < $7::timestamptz "
    "  AND ($8::bigint < 0 OR (l.received_at, l.callback_id) < "
    "       ('epoch'::timestamptz + $8::bigint * "
    "        interval '1 microsecond', $9)) "
    "ORDER BY l.received_at DESC, l.callback_id DESC LIMIT $10";

const std::string kGetCallback = std::string("SELECT ") + kCallbackSummary +
                                 "::text, l.raw_body, COALESCE(l.raw_headers::text, '') "
                                 "FROM payment_callback_log l "
                                 "LEFT JOIN payment_order p ON p.payment_no = l.payment_no "
                                 "WHERE l.callback_id = $1";

constexpr const char* kStoredRequest =
    "SELECT COALESCE(channel, ''), raw_body, COALESCE(raw_headers::text, '') "
    "FROM payment_callback_log WHERE callback_id = $1 AND raw_body IS NOT NULL";

// A status as the SQL literal of its stored value.
template <class Status>
std::string sql_status(Status status) {
  return std::to_string(static_cast<int>(status));
}

// The moves of one payment ($1), derived from its rows (the events live in the WAL only): the
// payment's and its order's current state with the time they reached it, and its discrepancies
// with their refunds. A state passed through (a failure healed by a later success) leaves no trace
// in the rows, so it shows only in the callbacks.
const std::string kTimelineMoves =
    "SELECT v.at, v.type, p.payment_no AS key, p.order_no, p.amount_cents, NULL::text AS detail "
    "FROM payment_order p CROSS JOIN LATERAL (VALUES "
    "  (CASE WHEN p.status IN (" +
    sql_status(domain::PaymentStatus::success) + ", " +
    sql_status(domain::PaymentStatus::refunded) + ") THEN p.paid_at END, '" +
    std::string(events::kPaymentSucceeded) +
    "'), "
    "  (CASE WHEN p.status = " +
    sql_status(domain::PaymentStatus::failed) + " THEN p.updated_at END, '" +
    std::string(events::kPaymentFailed) +
    "'), "
    "  (CASE WHEN p.status = " +
    sql_status(domain::PaymentStatus::closed) + " THEN p.updated_at END, '" +
    std::string(events::kPaymentClosed) +
    "'), "
    "  (CASE WHEN p.status = " +
    sql_status(domain::PaymentStatus::refunded) + " THEN p.updated_at END, '" +
    std::string(events::kPaymentRefunded) +
    "')) v(at, type) "
    "WHERE p.payment_no = $1 "
    "UNION ALL "
    "SELECT v.at, v.type, o.order_no, o.order_no, o.amount_cents, NULL::text "
    "FROM payment_order p JOIN order_info o ON o.order_no = p.order_no CROSS JOIN LATERAL (VALUES "
    "  (CASE WHEN o.status IN (" +
    sql_status(domain::OrderStatus::paid) + ", " + sql_status(domain::OrderStatus::refunded) +
    ") THEN COALESCE(p.paid_at, o.updated_at) END, '" + std::string(events::kOrderPaid) +
    "'), "
    "  (CASE WHEN o.status = " +
    sql_status(domain::OrderStatus::cancelled) + " THEN o.updated_at END, '" +
    std::string(events::kOrderCancelled) +
    "'), "
    "  (CASE WHEN o.status = " +
    sql_status(domain::OrderStatus::refunded) + " THEN o.updated_at END, '" +
    std::string(events::kOrderRefunded) +
    "')) v(at, type) "
    "WHERE p.payment_no = $1 "
    "UNION ALL "
    "SELECT v.at, v.type, d.id::text, d.order_no, v.amount_cents, v.detail "
    "FROM payment_discrepancy d "
    "LEFT JOIN payment_order p ON p.payment_no = d.payment_no "
    "LEFT JOIN discrepancy_refund r ON r.discrepancy_id = d.id AND r.status = 'succeeded' "
    "CROSS JOIN LATERAL (VALUES "
    "  (d.created_at, '" +
    std::string(events::kDiscrepancyRecorded) +
    "', p.amount_cents, d.kind), "
    "  (CASE WHEN r.discrepancy_id IS NULL THEN d.resolved_at END, '" +
    std::string(events::kDiscrepancyResolved) +
    "', p.amount_cents, d.kind), "
    "  (r.finished_at, '" +
    std::string(events::kDiscrepancyRefunded) +
    "', r.amount_cents, r.refund_no)) v(at, type, amount_cents, detail) "
    "WHERE d.payment_no = $1";

// Each kind bounded by $2, newest kept; then all of them in time order.
const std::string kTimeline =
    "WITH entries AS ("
    "  (SELECT l.received_at AS at, 'callback' AS kind, "
    "     json_build_object('callbackId', l.callback_id, 'channel', l.channel, "
    "       'status', l.status, 'result', l.result, 'httpStatus', l.http_status, "
    "       'duplicateCount', l.duplicate_count, 'lastDuplicateAt', l.last_duplicate_at) AS detail "
    "   FROM payment_callback_log l WHERE l.payment_no = $1 ORDER BY l.received_at DESC LIMIT $2)"
    "  UNION ALL "
    "  (SELECT q.last_at, 'query', "
    "     json_build_object('attempts', q.attempts, 'lastResult', q.last_result, "
    "       'nextAt', CASE WHEN q.next_at = 'infinity' THEN NULL ELSE q.next_at END) "
    "   FROM payment_query q WHERE q.payment_no = $1 AND q.last_at IS NOT NULL)"
    "  UNION ALL "
    "  (SELECT m.at, 'event', "
    "     json_build_object('type', m.type, 'eventId', m.type || ':' || m.key, "
    "       'orderNo', m.order_no, 'amountCents', m.amount_cents, 'detail', m.detail) "
    "   FROM (" +
    kTimelineMoves +
    ") m WHERE m.at IS NOT NULL ORDER BY m.at DESC LIMIT $2)"
    "  UNION ALL "
    "  (SELECT d.created_at, 'discrepancy', "
    "     json_build_object('id', d.id, 'kind', d.kind, 'detail', d.detail, "
    "       'resolvedAt', d.resolved_at) "
    "   FROM payment_discrepancy d WHERE d.payment_no = $1 ORDER BY d.id DESC LIMIT $2)"
    ") "
    "SELECT COALESCE(json_agg(json_build_object('at', at, 'kind', kind, 'detail', detail) "
    "                ORDER BY at, kind), '[]'::json)::text FROM entries";

std::string bytes_of(const pqxx::field& field) {
  const pqxx::binarystring bytes(field);
  return bytes.str();
}

// The stored headers (a JSON object of strings) as the channel reads them.
channels::Headers headers_of(const std::string& text) {
  channels::Headers headers;
  if (text.empty()) {
    return headers;
  }
  const auto parsed = json::parse(text, nullptr, false);
  if (!parsed.is_object()) {
    return headers;
  }
  for (const auto& [name, value] : parsed.items()) {
    if (value.is_string()) {
      headers.emplace(name, value.get<std::string>());
    }
  }
  return headers;
}

}  // namespace

std::string format_cursor(const CallbackCursor& cursor) {
  return std::to_string(cursor.received_us) + "_" + cursor.callback_id;
}

std::optional<CallbackCursor> parse_cursor(std::string_view text) {
  const auto sep = text.find('_');
  if (sep == std::string_view::npos || sep == 0 || sep + 1 >= text.size()) {
    return std::nullopt;
  }
  CallbackCursor cursor;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + sep, cursor.received_us);
  if (ec != std::errc{} || ptr != text.data() + sep || cursor.received_us < 0) {
    return std::nullopt;
  }
  cursor.callback_id = std::string(text.substr(sep + 1));
  return cursor;
}

CallbackLogStore::CallbackLogStore(PgSession& pg) : pg_(pg) {}

template <class Fn>
StoreResult CallbackLogStore::guarded(const char* operation, Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& error) {
    const auto kind = classify(error);
    pg_.reset_if_broken(error);
    spdlog::warn("event=store_unavailable operation={} error_class={}", operation,
                 kind == PgErrorClass::retryable ? "retryable" : "permanent");
    return {StoreStatus::unavailable, "storage unavailable", {}};
  }
}

StoreResult CallbackLogStore::search(const CallbackFilter& filter) {
  return guarded("search_callbacks", [&]() -> StoreResult {
    pqxx::read_transaction tx(pg_.connection());
    const auto rows = tx.exec_params(
        kSearchCallbacks, filter.payment_no, filter.order_no, filter.callback_id, filter.channel,
        filter.result, filter.from.empty() ? std::string("-infinity") : filter.from,
        filter.to.empty() ? std::string("infinity") : filter.to,
        filter.cursor ? filter.cursor->received_us : std::int64_t{-1},
        filter.cursor ? filter.cursor->callback_id : std::string(), filter.limit + 1);
    json callbacks = json::array();
    json next = nullptr;
    for (std::size_t i = 0; i < rows.size() && i < filter.limit; ++i) {
      auto row = json::parse(rows[i][0].as<std::string>());
      if (i + 1 == filter.limit && rows.size() > filter.limit) {
        next = format_cursor(
            {row["cursorUs"].get<std::int64_t>(), row["callbackId"].get<std::string>()});
      }
      row.erase("cursorUs");
      callbacks.push_back(std::move(row));
    }
    return {StoreStatus::ok, {}, {{"callbacks", std::move(callbacks)}, {"nextCursor", next}}};
  });
}

StoreResult CallbackLogStore::get(const std::string& callback_id) {
  return guarded("get_callback", [&]() -> StoreResult {
    pqxx::read_transaction tx(pg_.connection());
    const auto rows = tx.exec_params(kGetCallback, callback_id);
    if (rows.empty()) {
      return {StoreStatus::not_found, "unknown callback", {}};
    }
    auto body = json::parse(rows[0][0].as<std::string>());
    body.erase("cursorUs");
    if (rows[0][1].is_null()) {
      body["rawBody"] = nullptr;
    } else {
      const auto raw = bytes_of(rows[0][1]);
      // JSON carries text: a body that is not UTF-8 goes as base64 instead.
      if (channels::is_valid_utf8(raw)) {
        body["rawBody"] = raw;
      } else {
        body["rawBodyBase64"] = channels::base64_encode(raw);
      }
    }
    const auto headers = rows[0][2].as<std::string>();
    body["rawHeaders"] = headers.empty() ? json::object() : json::parse(headers);
    return {StoreStatus::ok, {}, std::move(body)};
  });
}

std::optional<StoredRequest> CallbackLogStore::stored_request(const std::string& callback_id,
                                                              StoreStatus& status) {
  try {
    pqxx::read_transaction tx(pg_.connection());
    const auto rows = tx.exec_params(kStoredRequest, callback_id);
    if (rows.empty()) {
      status = StoreStatus::not_found;
      return std::nullopt;
    }
    status = StoreStatus::ok;
    return StoredRequest{rows[0][0].as<std::string>(), bytes_of(rows[0][1]),
                         headers_of(rows[0][2].as<std::string>())};
  } catch (const std::exception& error) {
    pg_.reset_if_broken(error);
    spdlog::warn("event=store_unavailable operation=stored_request");
    status = StoreStatus::unavailable;
    return std::nullopt;
  }
}

StoreResult CallbackLogStore::timeline(const std::string& payment_no, OrderStore& orders) {
  auto payment = orders.get_payment(payment_no);
  if (payment.status != StoreStatus::ok) {
    return payment;
  }
  return guarded("payment_timeline", [&]() -> StoreResult {
    pqxx::read_transaction tx(pg_.connection());
    const auto row = tx.exec_params1(kTimeline, payment_no, kTimelineEntriesPerKindMax);
    return {
        StoreStatus::ok,
        {},
        {{"payment", std::move(payment.body)}, {"entries", json::parse(row[0].as<std::string>())}}};
  });
}

}  // namespace seatflow::persistence

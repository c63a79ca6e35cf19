// Callback search, one callback with its raw request, and a payment's timeline (SPEC §12).
#include "persistence/stores/callback_log.hpp"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <pqxx/binarystring>

#include "codec/crypto.hpp"
#include "codec/text.hpp"
#include "domain/types.hpp"
#include "persistence/drivers/log.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/stores/events.hpp"
#include "persistence/stores/guarded.hpp"
#include "persistence/stores/status_sql.hpp"

namespace seatflow::persistence {
namespace {

using nlohmann::json;

// One row per callback; the summary a search page lists (columns in CallbackRow order; see
// read_row). A timestamp is selected as its JSON text, the form the API shows; received_us is the
// exact received_at in epoch microseconds (the keyset of the page).
constexpr const char* kCallbackColumns =
    "l.callback_id, l.payment_no, p.order_no, l.channel, l.status, l.result, l.http_status, "
    "l.duplicate_count, to_json(l.received_at) #>> '{}', to_json(l.last_duplicate_at) #>> '{}', "
    "((extract(epoch FROM l.received_at) * 1000000)::bigint)";
constexpr int kCallbackColumnCount = 11;

// Each filter is either its "any" value or a condition; the statement is planned with the values
// (unnamed, custom plans), so the "any" branches fold away and payment_no, the order's unique
// index and received_at keep their indexes. Newest first, callback_id breaking ties (one batch
// shares its transaction's now()); one row beyond the page says whether a next page exists.
const std::string kSearchCallbacks =
    std::string("SELECT ") + kCallbackColumns +
    " FROM payment_callback_log l "
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

const std::string kGetCallback = std::string("SELECT ") + kCallbackColumns +
                                 ", l.raw_body, COALESCE(l.raw_headers::text, '') "
                                 "FROM payment_callback_log l "
                                 "LEFT JOIN payment_order p ON p.payment_no = l.payment_no "
                                 "WHERE l.callback_id = $1";

constexpr const char* kStoredRequest =
    "SELECT COALESCE(channel, ''), raw_body, COALESCE(raw_headers::text, '') "
    "FROM payment_callback_log WHERE callback_id = $1 AND raw_body IS NOT NULL";

// Each kind bounded by $2, newest kept; the entries are merged in time order in timeline(). Every
// statement starts with the entry's time: epoch microseconds (the order) and its JSON text.
constexpr const char* kTimelineCallbacks =
    "SELECT (extract(epoch FROM l.received_at) * 1000000)::bigint, "
    "  to_json(l.received_at) #>> '{}', l.callback_id, l.channel, l.status, l.result, "
    "  l.http_status, l.duplicate_count, to_json(l.last_duplicate_at) #>> '{}' "
    "FROM payment_callback_log l WHERE l.payment_no = $1 ORDER BY l.received_at DESC LIMIT $2";
constexpr const char* kTimelineQueries =
    "SELECT (extract(epoch FROM q.last_at) * 1000000)::bigint, to_json(q.last_at) #>> '{}', "
    "  q.attempts, q.last_result, "
    "  to_json(CASE WHEN q.next_at = 'infinity' THEN NULL ELSE q.next_at END) #>> '{}' "
    "FROM payment_query q WHERE q.payment_no = $1 AND q.last_at IS NOT NULL LIMIT $2";
// The moves of one payment ($1), derived from its rows (the events live in the WAL only): the
// payment's and its order's current state with the time they reached it, and its discrepancies
// with their refunds. A state passed through (a failure healed by a later success) leaves no trace
// in the rows, so it shows only in the callbacks.
const std::string kTimelineMoves =
    "SELECT v.at, v.type, p.payment_no AS key, p.order_no, p.amount_cents, NULL::text AS detail "
    "FROM payment_order p CROSS JOIN LATERAL (VALUES "
    "  (CASE WHEN " +
    status_sql::in("p.status", status_sql::money_taken_payments()) + " THEN p.paid_at END, '" +
    std::string(events::kPaymentSucceeded) +
    "'), "
    "  (CASE WHEN p.status = " +
    status_sql::literal(domain::PaymentStatus::failed) + " THEN p.updated_at END, '" +
    std::string(events::kPaymentFailed) +
    "'), "
    "  (CASE WHEN p.status = " +
    status_sql::literal(domain::PaymentStatus::closed) + " THEN p.updated_at END, '" +
    std::string(events::kPaymentClosed) +
    "'), "
    "  (CASE WHEN p.status = " +
    status_sql::literal(domain::PaymentStatus::refunded) + " THEN p.updated_at END, '" +
    std::string(events::kPaymentRefunded) +
    "')) v(at, type) "
    "WHERE p.payment_no = $1 "
    "UNION ALL "
    "SELECT v.at, v.type, o.order_no, o.order_no, o.amount_cents, NULL::text "
    "FROM payment_order p JOIN order_info o ON o.order_no = p.order_no CROSS JOIN LATERAL (VALUES "
    "  (CASE WHEN " +
    status_sql::in("o.status", std::vector{domain::OrderStatus::paid, domain::OrderStatus::refunded,
                                           domain::OrderStatus::partially_refunded}) +
    " THEN COALESCE(p.paid_at, o.updated_at) END, '" + std::string(events::kOrderPaid) +
    "'), "
    "  (CASE WHEN o.status = " +
    status_sql::literal(domain::OrderStatus::cancelled) + " THEN o.updated_at END, '" +
    std::string(events::kOrderCancelled) +
    "'), "
    "  (CASE WHEN o.status = " +
    status_sql::literal(domain::OrderStatus::refunded) + " THEN o.updated_at END, '" +
    std::string(events::kOrderRefunded) +
    "')) v(at, type) "
    "WHERE p.payment_no = $1 "
    "UNION ALL "
    "SELECT v.at, v.type, d.id::text, d.order_no, v.amount_cents, v.detail "
    "FROM payment_discrepancy d "
    "LEFT JOIN payment_order p ON p.payment_no = d.payment_no "
    "LEFT JOIN refund r ON r.discrepancy_id = d.id AND r.status = " +
    status_sql::literal(domain::RefundStatus::succeeded) +
    " "
    "CROSS JOIN LATERAL (VALUES "
    "  (d.created_at, '" +
    std::string(events::kDiscrepancyRecorded) +
    "', p.amount_cents, d.kind), "
    "  (CASE WHEN r.discrepancy_id IS NULL THEN d.resolved_at END, '" +
    std::string(events::kDiscrepancyResolved) +
    "', p.amount_cents, d.kind), "
    "  (r.settled_at, '" +
    std::string(events::kDiscrepancyRefunded) +
    "', r.amount_cents, r.refund_no)) v(at, type, amount_cents, detail) "
    "WHERE d.payment_no = $1";
// The moves as timeline entries, newest kept (their event ids are the ones the moves emitted).
const std::string kTimelineEvents =
    "SELECT (extract(epoch FROM m.at) * 1000000)::bigint, to_json(m.at) #>> '{}', m.type, "
    "  m.type || ':' || m.key, m.order_no, m.amount_cents, m.detail "
    "FROM (" +
    kTimelineMoves + ") m WHERE m.at IS NOT NULL ORDER BY m.at DESC LIMIT $2";
constexpr const char* kTimelineDiscrepancies =
    "SELECT (extract(epoch FROM d.created_at) * 1000000)::bigint, to_json(d.created_at) #>> '{}', "
    "  d.id, d.kind, d.detail::text, to_json(d.resolved_at) #>> '{}' "
    "FROM payment_discrepancy d WHERE d.payment_no = $1 ORDER BY d.id DESC LIMIT $2";

// A CallbackRow from kCallbackColumns starting at column 0.
CallbackRow read_row(const pqxx::row& row) {
  CallbackRow out;
  out.callback_id = row[0].as<std::string>();
  out.payment_no = optional_of<std::string>(row[1]);
  out.order_no = optional_of<std::string>(row[2]);
  out.channel = optional_of<std::string>(row[3]);
  out.status = optional_of<std::int64_t>(row[4]);
  out.result = optional_of<std::string>(row[5]);
  out.http_status = optional_of<std::int64_t>(row[6]);
  out.duplicate_count = row[7].as<std::int64_t>();
  out.received_at = row[8].as<std::string>();
  out.last_duplicate_at = optional_of<std::string>(row[9]);
  out.received_us = row[10].as<std::int64_t>();
  return out;
}

// The entries of one kind: `read` turns the columns after the two time columns into a detail.
template <class Read>
void append_entries(pqxx::transaction_base& tx, const std::string& query,
                    const std::string& payment_no, std::vector<TimelineEntry>& entries,
                    Read&& read) {
  for (const auto& row : tx.exec_params(query, payment_no, kTimelineEntriesPerKindMax)) {
    entries.push_back({row[0].as<std::int64_t>(), row[1].as<std::string>(), read(row)});
  }
}

std::string bytes_of(const pqxx::field& field) {
  const pqxx::binarystring bytes(field);
  return bytes.str();
}

// The stored headers (a JSON object of strings) as the channel reads them.
codec::Headers headers_of(const std::string& text) {
  codec::Headers headers;
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

template <class T, class Fn>
Result<T> CallbackLogStore::guarded(const char* operation, Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& error) {
    return store_unavailable(pg_, operation, error);
  }
}

Result<CallbackPage> CallbackLogStore::search(const CallbackFilter& filter) {
  return guarded<CallbackPage>("search_callbacks", [&]() -> Result<CallbackPage> {
    pqxx::read_transaction tx(pg_.connection());
    const auto rows = tx.exec_params(
        kSearchCallbacks, filter.payment_no, filter.order_no, filter.callback_id, filter.channel,
        filter.result, filter.from.empty() ? std::string("-infinity") : filter.from,
        filter.to.empty() ? std::string("infinity") : filter.to,
        filter.cursor ? filter.cursor->received_us : std::int64_t{-1},
        filter.cursor ? filter.cursor->callback_id : std::string(), filter.limit + 1);
    CallbackPage page;
    for (std::size_t i = 0; i < rows.size() && i < filter.limit; ++i) {
      page.callbacks.push_back(read_row(rows[i]));
    }
    if (rows.size() > filter.limit && !page.callbacks.empty()) {
      const auto& last = page.callbacks.back();
      page.next_cursor = format_cursor({last.received_us, last.callback_id});
    }
    return page;
  });
}

Result<CallbackDetail> CallbackLogStore::get(const std::string& callback_id) {
  return guarded<CallbackDetail>("get_callback", [&]() -> Result<CallbackDetail> {
    pqxx::read_transaction tx(pg_.connection());
    const auto rows = tx.exec_params(kGetCallback, callback_id);
    if (rows.empty()) {
      return refused(errc::not_found, "unknown callback");
    }
    CallbackDetail detail{read_row(rows[0]), std::nullopt, {}};
    if (!rows[0][kCallbackColumnCount].is_null()) {
      detail.raw_body = bytes_of(rows[0][kCallbackColumnCount]);
    }
    detail.raw_headers = rows[0][kCallbackColumnCount + 1].as<std::string>();
    return detail;
  });
}

Result<StoredRequest> CallbackLogStore::stored_request(const std::string& callback_id) {
  try {
    pqxx::read_transaction tx(pg_.connection());
    const auto rows = tx.exec_params(kStoredRequest, callback_id);
    if (rows.empty()) {
      return refused(errc::not_found, "unknown callback, or one logged without its raw request");
    }
    return StoredRequest{rows[0][0].as<std::string>(), bytes_of(rows[0][1]),
                         headers_of(rows[0][2].as<std::string>())};
  } catch (const std::exception& error) {
    return store_unavailable(pg_, "stored_request", error);
  }
}

std::string_view kind_of(const TimelineEntry& entry) {
  constexpr std::string_view kKinds[] = {"callback", "query", "event", "discrepancy"};
  return kKinds[entry.detail.index()];
}

Result<std::vector<TimelineEntry>> CallbackLogStore::timeline(const std::string& payment_no) {
  using Entries = std::vector<TimelineEntry>;
  return guarded<Entries>("payment_timeline", [&]() -> Result<Entries> {
    pqxx::read_transaction tx(pg_.connection());
    Entries entries;
    append_entries(tx, kTimelineCallbacks, payment_no, entries, [](const pqxx::row& row) {
      CallbackRow callback;
      callback.callback_id = row[2].as<std::string>();
      callback.channel = optional_of<std::string>(row[3]);
      callback.status = optional_of<std::int64_t>(row[4]);
      callback.result = optional_of<std::string>(row[5]);
      callback.http_status = optional_of<std::int64_t>(row[6]);
      callback.duplicate_count = row[7].as<std::int64_t>();
      callback.last_duplicate_at = optional_of<std::string>(row[8]);
      return callback;
    });
    append_entries(tx, kTimelineQueries, payment_no, entries, [](const pqxx::row& row) {
      return QueryEntry{row[2].as<std::int64_t>(), optional_of<std::string>(row[3]),
                        optional_of<std::string>(row[4])};
    });
    append_entries(tx, kTimelineEvents, payment_no, entries, [](const pqxx::row& row) {
      return EventEntry{row[2].as<std::string>(), row[3].as<std::string>(),
                        optional_of<std::string>(row[4]), optional_of<std::int64_t>(row[5]),
                        optional_of<std::string>(row[6])};
    });
    append_entries(tx, kTimelineDiscrepancies, payment_no, entries, [](const pqxx::row& row) {
      return DiscrepancyEntry{row[2].as<std::int64_t>(), row[3].as<std::string>(),
                              row[4].as<std::string>(), optional_of<std::string>(row[5])};
    });
    // Time order, then kind, as one `ORDER BY at, kind` over all of them would have it.
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return a.at_us != b.at_us ? a.at_us < b.at_us : kind_of(a) < kind_of(b);
    });
    return entries;
  });
}

}  // namespace seatflow::persistence

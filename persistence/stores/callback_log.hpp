// The callback log as the operations API reads it (SPEC §12): search with keyset pages, one
// callback with its raw request, and a payment's timeline. Read-only; SQL text lives in the .cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

#include "codec/headers.hpp"
#include "domain/types.hpp"
#include "persistence/drivers/errc.hpp"
#include "persistence/drivers/pg.hpp"

namespace seatflow::persistence {

// The most rows one search page or one timeline kind answers; the API bounds `limit` by it.
inline constexpr std::size_t kCallbackPageMax = 200;
inline constexpr std::size_t kCallbackPageDefault = 50;
inline constexpr std::size_t kTimelineEntriesPerKindMax = 500;

// Where a page ends: the last row's received_at (epoch microseconds) and callback id. Pages are
// newest first, so the next page holds the rows before this key.
struct CallbackCursor {
  std::int64_t received_us = 0;
  std::string callback_id;
};

// Every field is already validated by the HTTP layer; empty means "any".
struct CallbackFilter {
  std::string payment_no;
  std::string order_no;
  std::string callback_id;
  std::string channel;
  std::string result;  // a stored result class, or "duplicate" for rows with copies
  std::string from;    // RFC 3339, inclusive; "" = no lower bound
  std::string to;      // RFC 3339, exclusive; "" = no upper bound
  std::size_t limit = kCallbackPageDefault;
  std::optional<CallbackCursor> cursor;
};

// "<received_us>_<callbackId>": opaque to clients, parsed back by parse_cursor.
[[nodiscard]] std::string format_cursor(const CallbackCursor& cursor);
[[nodiscard]] std::optional<CallbackCursor> parse_cursor(std::string_view text);

// The raw request of one stored callback, as a replay needs it.
struct StoredRequest {
  std::string channel;
  std::string body;
  codec::Headers headers;
};

// A timestamp as the API shows it: PostgreSQL's JSON text of a timestamptz
// ("2026-12-01T18:00:00.123456+00:00", in the session's time zone); nullopt for NULL.
using TimeText = std::optional<std::string>;

// One log row as a search page lists it (and a timeline's callback entry shows part of it).
struct CallbackRow {
  std::string callback_id;
  std::optional<std::string> payment_no;
  std::optional<std::string> order_no;  // the payment's order; nullopt for an unknown payment
  std::optional<std::string> channel;
  std::optional<std::int64_t> status;       // the callback's status code (0 other, 1, 2)
  std::optional<std::string> result;        // the first delivery's result (migration 6 on)
  std::optional<std::int64_t> http_status;  // the status it was answered with (migration 6 on)
  std::int64_t duplicate_count = 0;
  std::string received_at;
  TimeText last_duplicate_at;
  std::int64_t received_us = 0;  // received_at in epoch microseconds: the page's keyset
};

struct CallbackPage {
  std::vector<CallbackRow> callbacks;      // newest first
  std::optional<std::string> next_cursor;  // format_cursor of the last row, when more exist
};

// One callback with its raw request.
struct CallbackDetail {
  CallbackRow row;
  std::optional<std::string> raw_body;  // bytes; nullopt for a row logged without it
  std::string raw_headers;              // a JSON object of strings; "" when none were kept
};

// A timeline entry's detail, one struct per kind.
struct QueryEntry {
  std::int64_t attempts = 0;
  std::optional<std::string> last_result;
  TimeText next_at;  // nullopt once the schedule is finished
};
struct EventEntry {
  std::string type;
  std::string event_id;
  std::optional<std::string> order_no;
  std::optional<std::int64_t> amount_cents;
  std::optional<std::string> detail;
};
struct DiscrepancyEntry {
  std::int64_t id = 0;
  std::string kind;
  std::string detail;  // a JSON document (the column is JSONB)
  TimeText resolved_at;
};

struct TimelineEntry {
  std::int64_t at_us = 0;  // the time order's key
  std::string at;
  std::variant<CallbackRow, QueryEntry, EventEntry, DiscrepancyEntry> detail;
};
// "callback", "query", "event" or "discrepancy": the entry's kind as the API names it.
[[nodiscard]] std::string_view kind_of(const TimelineEntry& entry);

class CallbackLogStore {
 public:
  explicit CallbackLogStore(PgSession& pg);

  // One page, newest first; errc::pg_unavailable when the store failed.
  [[nodiscard]] Result<CallbackPage> search(const CallbackFilter& filter);
  // One callback with its raw request, or errc::not_found / errc::pg_unavailable.
  [[nodiscard]] Result<CallbackDetail> get(const std::string& callback_id);
  // The stored request of one callback for a replay, or errc::not_found (no such row, or one
  // logged before migration 6 without its raw request) or errc::pg_unavailable.
  [[nodiscard]] Result<StoredRequest> stored_request(const std::string& callback_id);
  // A payment's callbacks, queries, events and discrepancies in time order (each kind bounded by
  // kTimelineEntriesPerKindMax, newest kept): one statement per kind in one read transaction,
  // whatever the number of entries. errc::pg_unavailable when the store failed.
  [[nodiscard]] Result<std::vector<TimelineEntry>> timeline(const std::string& payment_no);

 private:
  template <class T, class Fn>
  Result<T> guarded(const char* operation, Fn&& fn);

  PgSession& pg_;
};

}  // namespace seatflow::persistence

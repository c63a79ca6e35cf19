// The callback log as the operations API reads it (SPEC §12): search with keyset pages, one
// callback with its raw request, and a payment's timeline. Read-only; SQL text lives in the .cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "channels/channel.hpp"
#include "persistence/order_store.hpp"
#include "persistence/pg.hpp"

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
  channels::Headers headers;
};

class CallbackLogStore {
 public:
  explicit CallbackLogStore(PgSession& pg);

  // {"callbacks": [...], "nextCursor": "..." | null}, newest first.
  [[nodiscard]] StoreResult search(const CallbackFilter& filter);
  // One callback with its raw request ("rawBody" text, or "rawBodyBase64" when it is not UTF-8,
  // "rawHeaders"); not_found when there is no such row.
  [[nodiscard]] StoreResult get(const std::string& callback_id);
  // The stored request of one callback for a replay; nullopt with `status` not_found or
  // unavailable, or a row with no raw request (logged before migration 6: not_found).
  [[nodiscard]] std::optional<StoredRequest> stored_request(const std::string& callback_id,
                                                            StoreStatus& status);
  // {"payment": {...}, "entries": [{"at", "kind", "detail"}...]} in time order: callbacks,
  // queries, events and discrepancies of one payment; not_found for an unknown payment.
  [[nodiscard]] StoreResult timeline(const std::string& payment_no, OrderStore& orders);

 private:
  template <class Fn>
  StoreResult guarded(const char* operation, Fn&& fn);

  PgSession& pg_;
};

}  // namespace seatflow::persistence

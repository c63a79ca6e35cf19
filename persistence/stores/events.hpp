// The payment-event outbox through the WAL: event types, the SQL that emits a move's event in the
// same statement (and so the same transaction) as the move itself, and the decoding of what the
// logical replication slot gives back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seatflow::persistence::events {

// Every event type; the event id is "<type>:<key>" with the payment number, the order number or
// the discrepancy id as key. Each move happens at most once per key (SPEC §4), so the id is stable
// across replays and a consumer can de-duplicate by it.
inline constexpr std::string_view kPaymentSucceeded = "payment.succeeded";
inline constexpr std::string_view kPaymentFailed = "payment.failed";
inline constexpr std::string_view kPaymentClosed = "payment.closed";
inline constexpr std::string_view kPaymentRefunded = "payment.refunded";
inline constexpr std::string_view kOrderPaid = "order.paid";
inline constexpr std::string_view kOrderCancelled = "order.cancelled";
inline constexpr std::string_view kOrderRefunded = "order.refunded";
inline constexpr std::string_view kDiscrepancyRecorded = "discrepancy.recorded";
inline constexpr std::string_view kDiscrepancyResolved = "discrepancy.resolved";
// A discrepancy's money given back through its gateway (which resolves it); detail = the refund
// number.
inline constexpr std::string_view kDiscrepancyRefunded = "discrepancy.refunded";

// The prefix of every event message in the WAL (pg_logical_emit_message); messages with another
// prefix are never published. A slot may still hold heartbeats ("seatflow.heartbeat") that the
// SQL-interface relay of schema 8 emitted (an empty transaction giving an idle slot a commit to
// confirm; the streaming relay confirms an idle slot from the server's keepalives instead).
inline constexpr std::string_view kMessagePrefix = "seatflow";
// The publication the slot is read through: it covers no table, so pgoutput sends only the
// messages and their transactions' begin and commit (migration 0008 creates it).
inline constexpr std::string_view kPublication = "seatflow_events";
// The default name of the logical replication slot (SEATFLOW_EVENT_SLOT).
inline constexpr std::string_view kDefaultSlot = "seatflow_events";

// Wraps the data-modifying statement `move`, whose RETURNING list must name the columns
// event_key, payment_no, order_no, amount_cents and detail, so that the rows it moves also emit
// their events of `type`: one transactional WAL message (prefix kMessagePrefix) per statement, a
// JSON array holding one object with the fields of the stream entry per moved row, in the order of
// the rows. The result is `result_columns` of the moved rows, so its row count is still the CAS
// proof; a statement that moves nothing emits nothing, and a rolled-back move's message is never
// decoded. One message per statement, not per row: the walsender sends each decoded message on
// its own, and at one message per event its sends cost more than the decoding (issue 17).
[[nodiscard]] std::string with_event(std::string_view move, std::string_view type,
                                     std::string_view result_columns);

// One data-modifying statement of with_events, with the RETURNING list with_event asks for.
struct EventMove {
  std::string_view move;
  std::string_view type;
};

// Several moves in one statement, each a data-modifying CTE, whose events leave in one message
// (the events of the first move's rows, then the second's, …). The result is one row of counts,
// the rows each move moved, when any moved (the CAS proof); no row when none did.
[[nodiscard]] std::string with_events(const std::vector<EventMove>& moves);

// One row of pg_logical_slot_peek_binary_changes with the pgoutput plugin (protocol version 1),
// as far as the relay needs it (PostgreSQL 15, "Logical Replication Message Formats").
struct WalChange {
  enum class Kind : std::uint8_t { begin, message, commit, other };
  Kind kind = Kind::other;
  // message: the message's LSN; commit: the end LSN of the transaction (a commit boundary, the
  // point a slot may be confirmed to); begin: the final LSN of the transaction.
  std::uint64_t lsn = 0;
  bool transactional = false;  // message only
  std::string prefix;          // message only
  std::string content;         // message only
};

// Decodes one pgoutput row; nullopt when the bytes are truncated or malformed.
[[nodiscard]] std::optional<WalChange> parse_pgoutput(std::string_view bytes);

// The fields of the stream entry of one event message, in the stream's order (event_id, type,
// payment_no, order_no, amount_cents, detail, occurred_at), absent and null values left out;
// nullopt when the payload is not an event object.
using StreamFields = std::vector<std::pair<std::string, std::string>>;
[[nodiscard]] std::optional<StreamFields> stream_fields(std::string_view payload);

// The events of one message, in order: a JSON array of event objects (what with_event emits) or
// a single event object (what schema 3's migration and the statements before issue 17 emitted);
// nullopt when any element is not an event object or the payload is neither.
[[nodiscard]] std::optional<std::vector<StreamFields>> message_events(std::string_view payload);

// "X/Y" (PostgreSQL's pg_lsn text) from and to the 64-bit position.
[[nodiscard]] std::string format_lsn(std::uint64_t lsn);
[[nodiscard]] std::optional<std::uint64_t> parse_lsn(std::string_view text);

}  // namespace seatflow::persistence::events

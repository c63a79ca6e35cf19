// The gateway's history of one load (every request sent and every answer got, as JSON lines) and
// its checker: the history replayed against the domain model (domain/) and the stores' end state,
// as an idempotence workload checks a history. The checker itself is pure (check_history), so it is
// unit-tested with hand-made histories; load_snapshot reads the end state from PostgreSQL and
// Redis.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "load/check.hpp"

namespace seatflow::bench {

// A payment of the run as seeded (its statuses before any callback).
struct HistoryPayment {
  std::string payment_no;
  std::string order_no;
  std::string show_id;
  std::vector<std::string> seats;
  int seed_payment_status = 0;
  int seed_order_status = 0;
};

// One request the gateway sent and what came back: an HTTP status, or 0 for a transport error
// (connect/write/read failed or timed out: the engine may or may not have applied it).
struct HistoryExchange {
  std::string callback_id;
  std::string payment_no;
  int callback_status = 1;  // 1 success, 2 failure (the hmac dialect's status field)
  std::string sha256;       // the business digest of the content (SPEC §6 log row payload_sha256)
  std::int64_t sent_ms = 0;
  std::int64_t answer_ms = 0;
  int http = 0;
};

struct History {
  std::string run_prefix;
  std::vector<HistoryPayment> payments;
  std::vector<HistoryExchange> exchanges;
};

// Writes one run's history records as JSON lines to a fresh file (append-only while the load
// runs); every exchange is flushed, so a killed load leaves a readable prefix.
class HistoryWriter {
 public:
  // Throws std::runtime_error when `path` cannot be opened.
  explicit HistoryWriter(const std::string& path);
  void run(const std::string& run_prefix);
  void payment(const HistoryPayment& payment);
  void exchange(const HistoryExchange& exchange);

 private:
  std::ofstream out_;
};

// Reads a history file; throws std::runtime_error naming the line of a malformed record.
[[nodiscard]] History read_history(const std::string& path);

// The stores' end state for the payments of one history.
struct SnapshotLogRow {
  std::string payment_no;
  int status = 0;
  std::string sha256;
  std::int64_t duplicate_count = 0;
};
struct SnapshotEvent {
  std::int64_t seq = 0;  // commit order (the witness slot's)
  std::string event_id;
  std::string type;
  std::string payment_no;
  bool published = false;
};
struct Snapshot {
  // payment_no → (payment status, order status); a payment missing here is a violation.
  std::map<std::string, std::pair<int, int>> payments;
  std::map<std::string, SnapshotLogRow> log;  // by callback id
  std::vector<SnapshotEvent> events;          // the outbox rows of the run's payments, seq order
  // Open discrepancies: payment_no → kinds.
  std::map<std::string, std::vector<std::string>> discrepancies;
  // "show/seat" → the live orders (PENDING or PAID) listing it, its seat_claim holder ("" none)
  // and its Redis value ("" when the field is absent).
  std::map<std::string, std::vector<std::string>> live_orders_of_seat;
  std::map<std::string, std::string> claim_of_seat;
  std::map<std::string, std::string> redis_seat;
  // The stream's entries naming the run's payments (event_id, payment_no) in stream order;
  // nullopt when the stream was not read.
  std::optional<std::vector<std::pair<std::string, std::string>>> stream;
};

struct HistoryCheckOptions {
  // Redis lost its data during the run (the stream too): the stream must still hold no event
  // PostgreSQL did not commit, in per-payment order, but may miss published ones.
  bool stream_lossy = false;
  // The witness slot was made anew mid-run (a PostgreSQL failover: PostgreSQL 15 does not carry
  // logical slots to a standby), so it holds only the events committed after that. The moves
  // oracle then asks of each payment that its end statuses be reachable from its seed by legal
  // moves, each payment move into success or failed caused by a callback of that kind the gateway
  // sent; the stream oracle is off. The witnessed events still may not repeat a move.
  bool events_partial = false;
  // A balancer between the load and the engines may send each request this many times more
  // (HAProxy's retries): an id may reach the engines requests × (1 + resends) times.
  std::uint32_t proxy_resends = 0;
};

// Replays the history against the domain model and the snapshot; one CheckItem per oracle.
[[nodiscard]] CheckReport check_history(const History& history, const Snapshot& snapshot,
                                        const HistoryCheckOptions& options = {});

// Reads the snapshot of `history`'s payments from PostgreSQL and Redis (stream key `stream`).
[[nodiscard]] Snapshot load_snapshot(pqxx::connection& conn, persistence::RedisClient& redis,
                                     const History& history, const std::string& stream);

}  // namespace seatflow::bench

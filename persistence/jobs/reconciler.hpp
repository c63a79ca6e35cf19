// The reconciler (SPEC §7, §9): PostgreSQL is the truth, the Redis seat hashes are repaired to
// match. The truth for a seat is its `seat_claim` joined with the claiming order: `2:<order>` for a
// PAID order, `1:<order>` for a PENDING one, free when no live order claims it. It scans orders by
// key in bounded batches, compares each order's seats with HMGET, and heals only what differs,
// with Lua scripts run while the order's rows are share-locked, so a concurrent callback, close,
// refund or sweep can never be undone. What it cannot heal (a seat a paid order lists but another
// order claims) is recorded as a `seat_conflict` discrepancy.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "observability/registry.hpp"
#include "persistence/drivers/errc.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/drivers/redis.hpp"
#include "persistence/stores/seat_scripts.hpp"

namespace seatflow::persistence {

// The reconciler's probe, process-wide: seatflow_reconcile_repairs_total{kind},
// seatflow_reconcile_passes_total and seatflow_reconcile_errors_total.
struct ReconcileProbe {
  explicit ReconcileProbe(observability::Registry& registry);
  prometheus::Counter& seats_sold;      // seats set to `2:<order>` for PAID orders
  prometheus::Counter& seats_released;  // seats freed from CANCELLED/REFUNDED orders
  prometheus::Counter& seats_relocked;  // seats locked again for PENDING orders
  prometheus::Counter& seat_conflicts;  // seat_conflict discrepancies recorded
  prometheus::Counter& passes;          // full passes finished
  prometheus::Counter& errors;          // batches cut short by a store error

 private:
  ReconcileProbe(observability::Registry& registry,
                 prometheus::Family<prometheus::Counter>& repairs);
};

struct ReconcileStats {
  std::uint64_t orders_scanned = 0;
  std::uint64_t orders_repaired = 0;  // orders whose seats changed
  std::uint64_t seats_sold = 0;
  std::uint64_t seats_released = 0;
  std::uint64_t seats_relocked = 0;
  std::uint64_t seat_conflicts = 0;     // new seat_conflict discrepancies
  std::uint64_t pending_conflicts = 0;  // PENDING orders with a seat held by another order
  std::uint64_t errors = 0;
  std::string last_error;  // log-safe

  void add(const ReconcileStats& other);
  [[nodiscard]] std::uint64_t repairs() const {
    return seats_sold + seats_released + seats_relocked + seat_conflicts;
  }
};

// Phases of one pass: PAID orders first (so a rebuild gives sold seats to their buyers before any
// pending order can re-lock them), then CANCELLED/REFUNDED, then PENDING.
enum class ReconcilePhase : std::uint8_t { paid = 0, finished, pending, done };

struct ReconcileCursor {
  ReconcilePhase phase = ReconcilePhase::paid;
  std::string after;  // keyset: the last order_no of the previous batch
};

struct ReconcileOptions {
  std::size_t batch = 500;  // orders per batch (one SELECT, one HMGET pipeline)
  // Only orders whose order_no starts with this (targeted repair, tests); empty = all.
  std::string scope_prefix;
};

class Reconciler {
 public:
  Reconciler(PgSession& pg, RedisClient& redis, ReconcileOptions options, ReconcileProbe* counters);

  // Runs one batch at `cursor` and advances it; `cursor.phase` is `done` after the last batch of
  // a pass. A store error ends the batch early (counted) and leaves the cursor where it was.
  [[nodiscard]] ReconcileStats step(ReconcileCursor& cursor);
  // One full pass, batch after batch; stops at the first store error.
  [[nodiscard]] ReconcileStats run_pass();

 private:
  struct OrderRow {
    std::string order_no;
    std::string show_id;
    std::vector<std::string> seats;    // as the order lists them
    std::vector<std::string> claimed;  // those it holds the seat_claim of (SPEC §9)
  };
  // Each refused errc::redis_unavailable when Redis fails (a repair's transaction then rolls back);
  // libpqxx exceptions leave them for step() to classify.
  Result<void> scan_batch(ReconcilePhase phase, const std::vector<OrderRow>& rows,
                          ReconcileStats& stats);
  Result<void> repair(const OrderRow& row, ReconcileStats& stats);
  // A PENDING or PAID order, under its locks: claims its unclaimed seats, sets its claimed seats'
  // value, records the seats other orders claim; commits. Returns the seats changed in Redis.
  Result<std::uint64_t> repair_live(pqxx::work& tx, const std::string& order_no, bool paid,
                                    const std::string& show_id,
                                    const std::vector<std::string>& seats,
                                    const std::string& payment_no, ReconcileStats& stats);
  // A batch cut short: counted, `reason` kept as the last error and logged.
  void batch_failed(ReconcileStats& stats, std::string reason);
  void publish(const ReconcileStats& stats);

  PgSession& pg_;
  RedisClient& redis_;
  ReconcileOptions options_;
  ReconcileProbe* counters_;
  SeatStore seats_;  // the repairs' scripts (domain::SeatOp::repair_*)
};

}  // namespace seatflow::persistence

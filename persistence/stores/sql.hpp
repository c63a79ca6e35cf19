// Every SQL statement of the callback path, as named constants with $n parameters, their text in
// one table (persistence/stores/sql.cpp), and their preparation on each connection.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

namespace seatflow::persistence::sql {

// SPEC §6 for a batch of callbacks (a batch of one included), each statement set-based over
// arrays (persistence/stores/callback_executor.cpp). Every statement reaches its rows through a
// primary key whatever the statistics say (tests/integration/statement_plan_test.cpp checks the
// plans on tables loaded without ANALYZE): arrays are joined with unnest(), and a CAS compares the
// status with a parameter array, never a constant a partial index could match.
//
// Step 0: the payments and their orders, locked in one statement in payment key order, each
// order right after its payment: every writer locks a payment row before its order row, and two
// batches never deadlock. Each locked row comes with its ctid, which the moves address it by: a
// locked row keeps its version until the transaction moves it, so the moves fetch it directly
// instead of descending the primary key again.
inline constexpr std::string_view kBatchLockPaymentsAndOrders = "batch_lock_payments_and_orders";
// Step 1: insert log rows, or count duplicates with the same digest; returns (callback_id,
// inserted); a callback id with no row returned has another digest (a conflict).
inline constexpr std::string_view kBatchUpsertLogs = "batch_upsert_logs";
// Steps 2-3: the moves, each a CAS from the planned status to the planned status (both from the
// domain's state machines), writing their events (a WAL message) in the same statement. A move
// into SUCCESS writes paid_at and the trade number. Rows are addressed by the ctid their lock
// returned, and the key and status are checked on the row fetched. The payments into SUCCESS and
// the orders into PAID (arrays $1-$5 and $6-$10) move in one statement, whose one row, when
// anything moved, counts the moved rows of each (the CAS proof); the payments into FAILED (rare)
// return one row per moved row.
inline constexpr std::string_view kBatchMoveSucceededAndPaid = "batch_move_succeeded_and_paid";
inline constexpr std::string_view kBatchMovePaymentsFailed = "batch_move_payments_failed";
// Discrepancies, at most one open per (payment_no, kind).
inline constexpr std::string_view kBatchInsertDiscrepancies = "batch_insert_discrepancies";
// One discrepancy (the reconciler's seat_conflict).
inline constexpr std::string_view kInsertDiscrepancy = "insert_discrepancy";
// Log rows are locked in one order everywhere: callback_id by bytes (COLLATE "C", as std::string
// compares). The duplicate flush locks its rows in that order before it updates them, and a batch
// upserts its log rows in that order; in different orders the two deadlocked under a storm (one
// second of deadlock_timeout, then the batch's callbacks answered 503; bench/storm.sh).
inline constexpr std::string_view kBatchLockLogs = "batch_lock_logs";
// Duplicate counts answered from memory, added to their log rows (locked by kBatchLockLogs).
inline constexpr std::string_view kBatchAddDuplicates = "batch_add_duplicates";
// The paid orders (and seats) of some payments: the self-heal of duplicates.
inline constexpr std::string_view kBatchPaidOrdersOf = "batch_paid_orders_of";

// Statements the order store and the refund store share: a discrepancy's payment row locked
// first (every writer locks the payment row before anything of its own), and whether a
// discrepancy exists at all (404 versus 409).
inline constexpr const char* kLockPaymentOfDiscrepancy =
    "SELECT p.payment_no FROM payment_discrepancy d JOIN payment_order p "
    "  ON p.payment_no = d.payment_no WHERE d.id = $1 FOR UPDATE OF p";
inline constexpr const char* kDiscrepancyExists = "SELECT 1 FROM payment_discrepancy WHERE id = $1";

struct Statement {
  std::string_view name;
  std::string text;
};

// Every statement above with its SQL text, in one place.
[[nodiscard]] const std::vector<Statement>& statements();

}  // namespace seatflow::persistence::sql

namespace seatflow::persistence {

// Prepares every statement above on a fresh connection.
void prepare_statements(pqxx::connection& conn);

}  // namespace seatflow::persistence

// Every SQL statement SeatFlow runs, as named constants with $n parameters, and their preparation.
#pragma once

#include <string_view>

#include <pqxx/pqxx>

namespace seatflow::persistence::sql {

// Step 0: the payment, then its order, each locked for the transaction (SPEC §6). Every writer
// locks the payment row before the order row, so callbacks, close, refund and the sweeper never
// deadlock against each other.
inline constexpr std::string_view kLockPayment = "lock_payment";
inline constexpr std::string_view kLockOrder = "lock_order";
// Step 1: insert the log row, or count a duplicate with the same digest; no row = conflict.
inline constexpr std::string_view kInsertCallbackLog = "insert_callback_log";
// The moves below return one row per moved row (the CAS proof) and write its payment_event.
// Payment CAS into SUCCESS from $expected (0 or 2); writes paid_at and channel_trade_no.
inline constexpr std::string_view kPaymentCasSuccess = "payment_cas_success";
// Payment CAS 0→2.
inline constexpr std::string_view kPaymentCasFailed = "payment_cas_failed";
// Order CAS 0→1.
inline constexpr std::string_view kOrderCasPaid = "order_cas_paid";
// A discrepancy, at most one open per (payment_no, kind).
inline constexpr std::string_view kInsertDiscrepancy = "insert_discrepancy";
inline constexpr std::string_view kPing = "ping";

// Group commit: the same steps for many payments at once, over unnest()/ANY arrays
// (persistence/batch_store.cpp). Locks sorted by key, so two batches never deadlock.
inline constexpr std::string_view kBatchLockPayments = "batch_lock_payments";
inline constexpr std::string_view kBatchLockOrders = "batch_lock_orders";
// Insert log rows, or count duplicates with the same digest; returns (callback_id, inserted).
inline constexpr std::string_view kBatchUpsertLogs = "batch_upsert_logs";
inline constexpr std::string_view kBatchCasSuccess = "batch_cas_success";
inline constexpr std::string_view kBatchCasFailed = "batch_cas_failed";
inline constexpr std::string_view kBatchCasOrdersPaid = "batch_cas_orders_paid";
inline constexpr std::string_view kBatchInsertDiscrepancies = "batch_insert_discrepancies";
// Duplicate counts answered from memory, added to their log rows.
inline constexpr std::string_view kBatchAddDuplicates = "batch_add_duplicates";
// The paid orders (and seats) of some payments: the self-heal of duplicates.
inline constexpr std::string_view kBatchPaidOrdersOf = "batch_paid_orders_of";

}  // namespace seatflow::persistence::sql

namespace seatflow::persistence {

// Prepares every statement above on a fresh connection.
void prepare_statements(pqxx::connection& conn);

}  // namespace seatflow::persistence

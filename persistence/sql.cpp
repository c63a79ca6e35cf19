// The SQL text behind each named statement.
#include "persistence/sql.hpp"

#include <string>

#include "persistence/events.hpp"

namespace seatflow::persistence {

void prepare_statements(pqxx::connection& conn) {
  const auto prep = [&](std::string_view name, const std::string& text) {
    conn.prepare(std::string(name), text);
  };
  prep(sql::kLockPayment,
       "SELECT status, channel, amount_cents, order_no, COALESCE(channel_trade_no, '') "
       "FROM payment_order WHERE payment_no = $1 FOR UPDATE");
  prep(sql::kLockOrder,
       "SELECT status, show_id, to_json(seat_ids)::text FROM order_info "
       "WHERE order_no = $1 FOR UPDATE");
  prep(sql::kInsertCallbackLog,
       "INSERT INTO payment_callback_log "
       "  (callback_id, channel, payment_no, status, payload_sha256, received_at) "
       "VALUES ($1, $2, $3, $4, $5, now()) "
       "ON CONFLICT (callback_id) DO UPDATE "
       "  SET duplicate_count = payment_callback_log.duplicate_count + 1, "
       "      last_duplicate_at = now() "
       "  WHERE payment_callback_log.payload_sha256 = EXCLUDED.payload_sha256 "
       "RETURNING (xmax = 0) AS inserted");
  // Each move below also writes its payment_event in the same statement (persistence/events.hpp).
  prep(sql::kPaymentCasSuccess,
       events::with_event("UPDATE payment_order "
                          "SET status = 1, paid_at = now(), updated_at = now(), "
                          "    channel_trade_no = COALESCE(NULLIF($3, ''), channel_trade_no) "
                          "WHERE payment_no = $1 AND status = $2 "
                          "RETURNING payment_no AS event_key, payment_no, order_no, "
                          "          amount_cents, NULL::text AS detail",
                          events::kPaymentSucceeded, "payment_no"));
  prep(sql::kPaymentCasFailed,
       events::with_event("UPDATE payment_order SET status = 2, updated_at = now() "
                          "WHERE payment_no = $1 AND status = 0 "
                          "RETURNING payment_no AS event_key, payment_no, order_no, "
                          "          amount_cents, NULL::text AS detail",
                          events::kPaymentFailed, "payment_no"));
  prep(sql::kOrderCasPaid,
       events::with_event(
           "UPDATE order_info o SET status = 1, updated_at = now() "
           "WHERE o.order_no = $1 AND o.status = 0 "
           "RETURNING o.order_no AS event_key, "
           "  (SELECT p.payment_no FROM payment_order p WHERE p.order_no = o.order_no) "
           "    AS payment_no, o.order_no, o.amount_cents, NULL::text AS detail",
           events::kOrderPaid, "order_no"));
  prep(sql::kInsertDiscrepancy,
       events::with_event(
           "INSERT INTO payment_discrepancy AS d (payment_no, order_no, kind, detail) "
           "VALUES ($1, $2, $3, $4::jsonb) "
           "ON CONFLICT (payment_no, kind) WHERE resolved_at IS NULL DO NOTHING "
           "RETURNING d.id::text AS event_key, d.payment_no, d.order_no, "
           "  (SELECT p.amount_cents FROM payment_order p WHERE p.payment_no = d.payment_no) "
           "    AS amount_cents, d.kind AS detail",
           events::kDiscrepancyRecorded, "event_key"));
  // Group commit (persistence/batch_store.cpp): set-based over arrays, prepared like the rest so
  // a batch is not parsed and planned again on every transaction.
  prep(sql::kBatchLockPayments,
       "SELECT payment_no, status, channel, amount_cents, order_no, "
       "  COALESCE(channel_trade_no, '') FROM payment_order "
       "WHERE payment_no = ANY($1::text[]) ORDER BY payment_no FOR UPDATE");
  prep(sql::kBatchLockOrders,
       "SELECT order_no, status, show_id, to_json(seat_ids)::text FROM order_info "
       "WHERE order_no = ANY($1::text[]) ORDER BY order_no FOR UPDATE");
  prep(
      sql::kBatchUpsertLogs,
      "INSERT INTO payment_callback_log "
      "  (callback_id, channel, payment_no, status, payload_sha256, received_at) "
      "SELECT v.id, v.ch, v.pn, v.st, v.dg, now() "
      "FROM unnest($1::text[], $2::text[], $3::text[], $4::smallint[], $5::text[]) "
      "  AS v(id, ch, pn, st, dg) "
      "ON CONFLICT (callback_id) DO UPDATE "
      "  SET duplicate_count = payment_callback_log.duplicate_count + 1, last_duplicate_at = now() "
      "  WHERE payment_callback_log.payload_sha256 = EXCLUDED.payload_sha256 "
      "RETURNING callback_id, (xmax = 0)");
  prep(sql::kBatchCasSuccess,
       events::with_event(
           "UPDATE payment_order p SET status = 1, paid_at = now(), updated_at = now(), "
           "  channel_trade_no = COALESCE(NULLIF(v.trade, ''), p.channel_trade_no) "
           "FROM unnest($1::text[], $2::smallint[], $3::text[]) AS v(pn, expected, trade) "
           "WHERE p.payment_no = v.pn AND p.status = v.expected "
           "RETURNING p.payment_no AS event_key, p.payment_no, p.order_no, p.amount_cents, "
           "          NULL::text AS detail",
           events::kPaymentSucceeded, "payment_no"));
  prep(sql::kBatchCasFailed,
       events::with_event("UPDATE payment_order SET status = 2, updated_at = now() "
                          "WHERE payment_no = ANY($1::text[]) AND status = 0 "
                          "RETURNING payment_no AS event_key, payment_no, order_no, amount_cents, "
                          "NULL::text AS detail",
                          events::kPaymentFailed, "payment_no"));
  prep(sql::kBatchCasOrdersPaid,
       events::with_event("UPDATE order_info o SET status = 1, updated_at = now() "
                          "WHERE o.order_no = ANY($1::text[]) AND o.status = 0 "
                          "RETURNING o.order_no AS event_key, "
                          "  (SELECT p.payment_no FROM payment_order p WHERE p.order_no = "
                          "o.order_no) AS payment_no, "
                          "  o.order_no, o.amount_cents, NULL::text AS detail",
                          events::kOrderPaid, "order_no"));
  prep(sql::kBatchInsertDiscrepancies,
       events::with_event(
           "INSERT INTO payment_discrepancy AS d (payment_no, order_no, kind, detail) "
           "SELECT v.pn, v.o, v.k, v.d::jsonb "
           "FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(pn, o, k, d) "
           "ON CONFLICT (payment_no, kind) WHERE resolved_at IS NULL DO NOTHING "
           "RETURNING d.id::text AS event_key, d.payment_no, d.order_no, "
           "  (SELECT p.amount_cents FROM payment_order p WHERE p.payment_no = d.payment_no) "
           "    AS amount_cents, d.kind AS detail",
           events::kDiscrepancyRecorded, "event_key"));
  prep(sql::kBatchAddDuplicates,
       "UPDATE payment_callback_log l "
       "SET duplicate_count = l.duplicate_count + v.n, last_duplicate_at = now() "
       "FROM unnest($1::text[], $2::int[]) AS v(id, n) WHERE l.callback_id = v.id");
  prep(sql::kBatchPaidOrdersOf,
       "SELECT o.order_no, o.show_id, to_json(o.seat_ids)::text "
       "FROM payment_order p JOIN order_info o ON o.order_no = p.order_no "
       "WHERE p.payment_no = ANY($1::text[]) AND p.status = 1 AND o.status = 1");
  prep(sql::kPing, "SELECT 1");
}

}  // namespace seatflow::persistence

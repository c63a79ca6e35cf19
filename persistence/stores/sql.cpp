// The SQL text behind each named statement of the callback path.
#include "persistence/stores/sql.hpp"

#include "persistence/stores/events.hpp"

namespace seatflow::persistence {
namespace sql {

const std::vector<Statement>& statements() {
  static const std::vector<Statement> all = {
      {kBatchLockPaymentsAndOrders,
       "SELECT p.payment_no, p.status, p.channel, p.amount_cents, p.order_no, "
       "  COALESCE(p.channel_trade_no, ''), p.ctid::text, "
       "  o.status, o.show_id, to_json(o.seat_ids)::text, o.ctid::text "
       "FROM unnest($1::text[]) AS v(pn) JOIN payment_order p ON p.payment_no = v.pn "
       "JOIN order_info o ON o.order_no = p.order_no "
       "ORDER BY p.payment_no FOR UPDATE OF p, o"},
      {kBatchUpsertLogs,
       "INSERT INTO payment_callback_log "
       "  (callback_id, channel, payment_no, status, payload_sha256, received_at, result, "
       "   http_status, raw_body, raw_headers) "
       "SELECT v.id, v.ch, v.pn, v.st, v.dg, now(), v.res, v.http, "
       "  decode(NULLIF(v.body, ''), 'hex'), NULLIF(v.hdr, '')::jsonb "
       "FROM unnest($1::text[], $2::text[], $3::text[], $4::smallint[], $5::text[], $6::text[], "
       "            $7::smallint[], $8::text[], $9::text[]) "
       "  AS v(id, ch, pn, st, dg, res, http, body, hdr) "
       "ON CONFLICT (callback_id) DO UPDATE "
       "  SET duplicate_count = payment_callback_log.duplicate_count + 1, "
       "      last_duplicate_at = now() "
       "  WHERE payment_callback_log.payload_sha256 = EXCLUDED.payload_sha256 "
       "RETURNING callback_id, (xmax = 0)"},
      {kBatchMoveSucceededAndPaid,
       events::with_events(
           {{"UPDATE payment_order p SET status = v.to_status, paid_at = now(), "
             "  updated_at = now(), "
             "  channel_trade_no = COALESCE(NULLIF(v.trade, ''), p.channel_trade_no) "
             "FROM unnest($1::text[], $2::smallint[], $3::smallint[], $4::text[], $5::tid[]) "
             "  AS v(pn, from_status, to_status, trade, row_id) "
             "WHERE p.ctid = v.row_id AND p.payment_no = v.pn AND p.status = v.from_status "
             "RETURNING p.payment_no AS event_key, p.payment_no, p.order_no, p.amount_cents, "
             "          NULL::text AS detail",
             events::kPaymentSucceeded},
            {"UPDATE order_info o SET status = v.to_status, updated_at = now() "
             "FROM unnest($6::text[], $7::smallint[], $8::smallint[], $9::text[], $10::tid[]) "
             "  AS v(no, from_status, to_status, pn, row_id) "
             "WHERE o.ctid = v.row_id AND o.order_no = v.no AND o.status = v.from_status "
             "RETURNING o.order_no AS event_key, v.pn AS payment_no, o.order_no, "
             "          o.amount_cents, NULL::text AS detail",
             events::kOrderPaid}})},
      {kBatchMovePaymentsFailed,
       events::with_event(
           "UPDATE payment_order p SET status = v.to_status, updated_at = now() "
           "FROM unnest($1::text[], $2::smallint[], $3::smallint[], $4::tid[]) "
           "  AS v(pn, from_status, to_status, row_id) "
           "WHERE p.ctid = v.row_id AND p.payment_no = v.pn AND p.status = v.from_status "
           "RETURNING p.payment_no AS event_key, p.payment_no, p.order_no, p.amount_cents, "
           "          NULL::text AS detail",
           events::kPaymentFailed, "payment_no")},
      {kBatchInsertDiscrepancies,
       events::with_event(
           "INSERT INTO payment_discrepancy AS d (payment_no, order_no, kind, detail) "
           "SELECT v.pn, v.o, v.k, v.d::jsonb "
           "FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(pn, o, k, d) "
           "ON CONFLICT (payment_no, kind) WHERE resolved_at IS NULL DO NOTHING "
           "RETURNING d.id::text AS event_key, d.payment_no, d.order_no, "
           "  (SELECT p.amount_cents FROM payment_order p WHERE p.payment_no = d.payment_no) "
           "    AS amount_cents, d.kind AS detail",
           events::kDiscrepancyRecorded, "event_key")},
      {kInsertDiscrepancy,
       events::with_event(
           "INSERT INTO payment_discrepancy AS d (payment_no, order_no, kind, detail) "
           "VALUES ($1, $2, $3, $4::jsonb) "
           "ON CONFLICT (payment_no, kind) WHERE resolved_at IS NULL DO NOTHING "
           "RETURNING d.id::text AS event_key, d.payment_no, d.order_no, "
           "  (SELECT p.amount_cents FROM payment_order p WHERE p.payment_no = d.payment_no) "
           "    AS amount_cents, d.kind AS detail",
           events::kDiscrepancyRecorded, "event_key")},
      {kBatchLockLogs,
       "SELECT l.callback_id FROM payment_callback_log l "
       "WHERE l.callback_id = ANY($1::text[]) "
       "ORDER BY l.callback_id COLLATE \"C\" FOR UPDATE OF l"},
      {kBatchAddDuplicates,
       "UPDATE payment_callback_log l "
       "SET duplicate_count = l.duplicate_count + v.n, last_duplicate_at = now() "
       "FROM unnest($1::text[], $2::int[]) AS v(id, n) WHERE l.callback_id = v.id"},
      {kBatchPaidOrdersOf,
       "SELECT o.order_no, o.show_id, to_json(o.seat_ids)::text "
       "FROM unnest($1::text[]) AS v(pn) JOIN payment_order p ON p.payment_no = v.pn "
       "JOIN order_info o ON o.order_no = p.order_no "
       "WHERE p.status = $2 AND o.status = $3"},
  };
  return all;
}

}  // namespace sql

void prepare_statements(pqxx::connection& conn) {
  for (const auto& statement : sql::statements()) {
    conn.prepare(std::string(statement.name), statement.text);
  }
}

}  // namespace seatflow::persistence

// The SQL text behind each named statement.
#include "persistence/sql.hpp"

#include <string>

namespace seatflow::persistence {

void prepare_statements(pqxx::connection& conn) {
  const auto prep = [&](std::string_view name, const char* text) {
    conn.prepare(std::string(name), text);
  };
  prep(sql::kLockPayment,
       "SELECT status, channel, amount_cents, order_no FROM payment_order "
       "WHERE payment_no = $1 FOR UPDATE");
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
  prep(sql::kPaymentCasSuccess,
       "UPDATE payment_order "
       "SET status = 1, paid_at = now(), updated_at = now(), "
       "    channel_trade_no = COALESCE(NULLIF($3, ''), channel_trade_no) "
       "WHERE payment_no = $1 AND status = $2");
  prep(sql::kPaymentCasFailed,
       "UPDATE payment_order SET status = 2, updated_at = now() "
       "WHERE payment_no = $1 AND status = 0");
  prep(sql::kOrderCasPaid,
       "UPDATE order_info SET status = 1, updated_at = now() "
       "WHERE order_no = $1 AND status = 0");
  prep(sql::kInsertDiscrepancy,
       "INSERT INTO payment_discrepancy (payment_no, order_no, kind, detail) "
       "VALUES ($1, $2, $3, $4::jsonb) "
       "ON CONFLICT (payment_no, kind) WHERE resolved_at IS NULL DO NOTHING");
  prep(sql::kPing, "SELECT 1");
}

}  // namespace seatflow::persistence

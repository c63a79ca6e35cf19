// Builds the move-plus-event statements of the outbox.
#include "persistence/events.hpp"

namespace seatflow::persistence::events {

std::string with_event(std::string_view move, std::string_view type,
                       std::string_view result_columns) {
  std::string sql = "WITH moved AS (";
  sql.append(move);
  sql.append(
      "), recorded AS ("
      "INSERT INTO payment_event "
      "(event_id, type, payment_no, order_no, amount_cents, detail, occurred_at) SELECT '");
  sql.append(type);
  sql.append(":' || moved.event_key, '");
  sql.append(type);
  sql.append(
      "', moved.payment_no, moved.order_no, moved.amount_cents, moved.detail, now() FROM moved "
      "ON CONFLICT (event_id) DO NOTHING) SELECT ");
  sql.append(result_columns);
  sql.append(" FROM moved");
  return sql;
}

}  // namespace seatflow::persistence::events

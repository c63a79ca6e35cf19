// Order, payment and discrepancy operations; SQL text as named constants, errors classified here.
#include "persistence/stores/order_store.hpp"

#include <cassert>
#include <random>
#include <utility>

#include "domain/assert.hpp"
#include "domain/ids.hpp"
#include "domain/records.hpp"
#include "persistence/drivers/log.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/stores/events.hpp"
#include "persistence/stores/guarded.hpp"
#include "persistence/stores/sql.hpp"
#include "persistence/stores/status_sql.hpp"

namespace seatflow::persistence {
namespace {

using domain::OrderStatus;
using domain::PaymentStatus;

// A new order and a new payment start PENDING.
const std::string kInsertOrder =
    "INSERT INTO order_info (order_no, user_id, show_id, seat_ids, amount_cents, status, "
    "                        expires_at) "
    "VALUES ($1, $2, $3, $4::text[], $5, " +
    status_sql::literal(OrderStatus::pending) +
    ", now() + $6 * interval '1 millisecond') "
    "ON CONFLICT (order_no) DO NOTHING RETURNING order_no";
// SPEC §9: one statement claims every seat of the new order, in seat order (two orders that share
// seats wait for each other in one order, never in a cycle). A seat another order has claimed, or
// is claiming in a transaction not yet committed, is skipped (after that transaction ends); the
// answer is the first seat not claimed here, or no row when all were.
constexpr const char* kClaimSeats =
    "WITH wanted AS (SELECT DISTINCT unnest($3::text[]) AS seat_id), "
    "claimed AS ("
    "  INSERT INTO seat_claim (show_id, seat_id, order_no, claimed_at) "
    "  SELECT $1, w.seat_id, $2, now() FROM wanted w ORDER BY w.seat_id "
    "  ON CONFLICT (show_id, seat_id) DO NOTHING RETURNING seat_id) "
    "SELECT w.seat_id FROM wanted w "
    "WHERE NOT EXISTS (SELECT 1 FROM claimed c WHERE c.seat_id = w.seat_id) "
    "ORDER BY w.seat_id LIMIT 1";
// The move of an order to CANCELLED or REFUNDED gives up its claims in the same transaction; by
// primary key, so the plan does not depend on statistics.
constexpr const char* kReleaseClaims =
    "DELETE FROM seat_claim WHERE show_id = $1 AND seat_id = ANY($2::text[]) AND order_no = $3";
// With the number of seats the order lists and of those it claims: only a migration's conflict
// (SPEC §9) leaves a live order short of its claims, and such an order is refused a payment.
constexpr const char* kLockOrderForPayment =
    "SELECT o.status, o.amount_cents, cardinality(o.seat_ids), "
    "  (SELECT count(*) FROM seat_claim c WHERE c.order_no = o.order_no AND c.show_id = o.show_id) "
    "FROM order_info o WHERE o.order_no = $1 FOR UPDATE OF o";
const std::string kInsertPayment =
    "INSERT INTO payment_order (payment_no, order_no, channel, amount_cents, status) "
    "VALUES ($1, $2, $3, $4, " +
    status_sql::literal(PaymentStatus::pending) + ") ON CONFLICT DO NOTHING RETURNING payment_no";
// The new payment's active-query schedule, in the payment's transaction (SPEC §10).
constexpr const char* kScheduleQuery =
    "INSERT INTO payment_query (payment_no, next_at) "
    "VALUES ($1, now() + $2 * interval '1 millisecond') ON CONFLICT DO NOTHING";
constexpr const char* kPaymentOfOrder =
    "SELECT payment_no, status FROM payment_order WHERE order_no = $1 FOR UPDATE";
constexpr const char* kExistingPayment =
    "SELECT payment_no, channel FROM payment_order WHERE order_no = $1";
constexpr const char* kLockPaymentByNo =
    "SELECT status, order_no FROM payment_order WHERE payment_no = $1 FOR UPDATE";
constexpr const char* kLockOrderState =
    "SELECT status, show_id, to_json(seat_ids)::text, expires_at < now() FROM order_info "
    "WHERE order_no = $1 FOR UPDATE";
// The orders the sweeper may cancel, with the order's payment when that is still pending (the
// sweeper asks its gateway first). The moves (close_end()) emit their events in the same statement.
const std::string kExpiredOrders =
    "SELECT o.order_no, COALESCE(p.payment_no, ''), COALESCE(p.channel, ''), "
    "  (extract(epoch FROM now() - o.expires_at) * 1000)::bigint FROM order_info o "
    "LEFT JOIN payment_order p ON p.order_no = o.order_no AND " +
    status_sql::in("p.status", std::vector{PaymentStatus::pending}) +
    " LEFT JOIN payment_gateway g ON g.payment_no = p.payment_no AND g.close_next_at > now()"
    " WHERE " +
    status_sql::in("o.status", domain::order_transition(domain::OrderEvent::cancel).from) +
    " AND o.expires_at < now() AND g.payment_no IS NULL ORDER BY o.expires_at LIMIT $1";
// The API's resources as typed columns; a timestamp as PostgreSQL's JSON text of it (what
// json_build_object writes), so the API shows the text it always has.
constexpr const char* kOrderRow =
    "SELECT o.order_no, o.user_id, o.show_id, to_json(o.seat_ids)::text, o.amount_cents, "
    "  o.status, to_json(o.expires_at) #>> '{}', to_json(o.created_at) #>> '{}', "
    "  to_json(o.updated_at) #>> '{}', p.payment_no "
    "FROM order_info o LEFT JOIN payment_order p ON p.order_no = o.order_no "
    "WHERE o.order_no = $1";
constexpr const char* kPaymentRow =
    "SELECT p.payment_no, p.order_no, p.channel, p.amount_cents, p.status, p.channel_trade_no, "
    "  to_json(p.paid_at) #>> '{}', to_json(p.created_at) #>> '{}', "
    "  to_json(p.updated_at) #>> '{}', o.status, g.pay::text, g.gateway_ref "
    "FROM payment_order p JOIN order_info o ON o.order_no = p.order_no "
    "LEFT JOIN payment_gateway g ON g.payment_no = p.payment_no "
    "WHERE p.payment_no = $1";
const std::string kListDiscrepancies =
    std::string(kDiscrepancyRowSelect) +
    "WHERE (NOT $1 OR d.resolved_at IS NULL) ORDER BY d.id DESC LIMIT $2";
// The payment row is locked first, as every other writer does, so a payment's events are
// numbered in the order its moves commit.
const std::string kResolveDiscrepancy = events::with_event(
    "UPDATE payment_discrepancy d SET resolved_at = now() "
    "WHERE d.id = $1 AND d.resolved_at IS NULL "
    "RETURNING d.id::text AS event_key, d.payment_no, d.order_no, "
    "  (SELECT p.amount_cents FROM payment_order p WHERE p.payment_no = d.payment_no) "
    "    AS amount_cents, d.kind AS detail",
    events::kDiscrepancyResolved, "event_key");

OrderRow order_of(const pqxx::row& row) {
  return {row[0].as<std::string>(),         optional_of<std::string>(row[1]),
          row[2].as<std::string>(),         json_strings(row[3]),
          row[4].as<std::int64_t>(),        row[5].as<std::int64_t>(),
          optional_of<std::string>(row[6]), row[7].as<std::string>(),
          row[8].as<std::string>(),         optional_of<std::string>(row[9])};
}

PaymentRow payment_of(const pqxx::row& row) {
  return {row[0].as<std::string>(),          row[1].as<std::string>(),
          row[2].as<std::string>(),          row[3].as<std::int64_t>(),
          row[4].as<std::int64_t>(),         optional_of<std::string>(row[5]),
          optional_of<std::string>(row[6]),  row[7].as<std::string>(),
          row[8].as<std::string>(),          row[9].as<std::int64_t>(),
          optional_of<std::string>(row[10]), optional_of<std::string>(row[11])};
}

// One row by its key, read by `read`; nullopt when there is none.
template <class Read>
auto fetch(pqxx::transaction_base& tx, const char* query, const std::string& key, Read read)
    -> std::optional<decltype(read(std::declval<pqxx::row>()))> {
  const auto rows = tx.exec_params(query, key);
  if (rows.empty()) {
    return std::nullopt;
  }
  return read(rows[0]);
}

// The row a call just wrote or locked, read after its commit: it exists (a missing one is a
// programmer error).
template <class Read>
auto fetch_written(PgSession& pg, const char* query, const std::string& key, Read read) {
  pqxx::read_transaction tx(pg.connection());
  auto row = fetch(tx, query, key, read);
  assert(row.has_value());
  return std::move(*row);
}

void release_after_commit(SeatStore& seats, const std::string& show_id, const std::string& order_no,
                          const std::vector<std::string>& seat_ids, bool sold) {
  // The database move is committed; a failed release leaves seats held by a finished order,
  // which the reconciler frees. Releasing before the commit could free seats of an order that
  // then stays pending.
  const auto result = sold ? seats.release_sold(show_id, order_no, seat_ids)
                           : seats.release(show_id, order_no, seat_ids);
  if (!result.ok()) {
    logger().warn("event=seat_release_failed order_no={} reason=redis_unavailable",
                  quoted_value(order_no));
  }
}

// The pg_commit failpoint before every commit of an API or sweeper transaction: an error rolls the
// transaction back and answers unavailable, exactly as a failed COMMIT would.
void commit(pqxx::work& tx, Failpoints* failpoints) {
  if (failpoints != nullptr && failpoints->hit(FailpointId::pg_commit)) {
    throw pqxx::broken_connection("failpoint pg_commit");
  }
  tx.commit();
}

}  // namespace

std::string new_id(std::string_view prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  constexpr char kHex[] = "0123456789abcdef";
  std::string out(prefix);
  out.push_back('_');
  for (int i = 0; i < 20; ++i) {
    out.push_back(kHex[rng() % 16]);
  }
  return out;
}

namespace {

// A discrepancy's refund as the API shows it: a PENDING refund whose last attempt ended failed.
std::string discrepancy_refund_status(domain::RefundStatus status, bool attempt_finished) {
  if (status == domain::RefundStatus::pending && attempt_finished) {
    return std::string(domain::to_string(domain::RefundStatus::failed));
  }
  return std::string(domain::to_string(status));
}

}  // namespace

DiscrepancyRow discrepancy_row(const pqxx::row& row) {
  DiscrepancyRow out{row[0].as<std::int64_t>(),        row[1].as<std::string>(),
                     optional_of<std::string>(row[2]), row[3].as<std::string>(),
                     row[4].as<std::string>(),         row[5].as<std::string>(),
                     optional_of<std::string>(row[6]), std::nullopt};
  if (row[7].as<bool>()) {
    const auto status = stored_refund_status(row[8].as<int>());
    const bool succeeded = status == domain::RefundStatus::succeeded;
    out.refund = DiscrepancyRefundRow{discrepancy_refund_status(status, row[9].as<bool>()),
                                      optional_of<std::string>(succeeded ? row[11] : row[10]),
                                      row[12].as<std::string>(),
                                      optional_of<std::string>(row[13]),
                                      row[14].as<std::int64_t>(),
                                      row[15].as<std::string>(),
                                      optional_of<std::string>(row[16])};
  }
  return out;
}

OrderStore::OrderStore(PgSession& pg, SeatStore& seats, std::uint32_t query_first_step_ms)
    : pg_(pg), seats_(seats), query_first_step_ms_(query_first_step_ms) {}

Failure OrderStore::failure(const char* operation, const std::exception& error) {
  const auto kind = classify(error);
  if (kind == PgErrorClass::unique_violation) {
    return refused(errc::already_exists, "already exists");
  }
  return store_unavailable(pg_, operation, error);
}

template <class Fn>
auto OrderStore::guarded(const char* operation, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::exception& error) {
    return failure(operation, error);
  }
}

Result<Stored<OrderRow>> OrderStore::create_order(const NewOrder& order) {
  SEATFLOW_ASSERT(order.order_no.empty() || domain::is_id(order.order_no));
  SEATFLOW_ASSERT(domain::is_id(order.show_id));
  SEATFLOW_ASSERT(!order.seat_ids.empty());
  SEATFLOW_ASSERT(order.amount_cents > 0);
  SEATFLOW_ASSERT(order.timeout_ms > 0);
  return guarded("create_order", [&]() -> Result<Stored<OrderRow>> {
    const auto order_no = order.order_no.empty() ? new_id("ord") : order.order_no;
    pqxx::work tx(pg_.connection());
    const auto inserted =
        tx.exec_params(kInsertOrder, order_no, order.user_id, order.show_id,
                       to_pg_array(order.seat_ids), order.amount_cents, order.timeout_ms);
    if (inserted.empty()) {
      return refused(errc::already_exists, "orderNo already exists", {"orderNo", order_no});
    }
    // PostgreSQL decides first: a claimed seat is refused whatever Redis holds (it may have lost
    // its data). Returning rolls the transaction back, so nothing of this order is kept.
    const auto taken =
        tx.exec_params(kClaimSeats, order.show_id, order_no, to_pg_array(order.seat_ids));
    if (!taken.empty()) {
      const auto seat = taken[0][0].as<std::string>();
      return refused(errc::conflict, "seat " + seat + " is taken", {"seatId", seat});
    }
    const auto locked = seats_.lock(order.show_id, order_no, order.seat_ids);
    if (locked.error() == errc::conflict) {
      const auto& seat = locked.named().value;
      return refused(errc::conflict, "seat " + seat + " is taken", {"seatId", seat});
    }
    if (!locked.ok()) {
      return refused(errc::redis_unavailable, "seat store unavailable");
    }
    try {
      commit(tx, pg_.failpoints());
    } catch (...) {
      (void)seats_.release(order.show_id, order_no, order.seat_ids);
      throw;
    }
    return {Done::created, fetch_written(pg_, kOrderRow, order_no, order_of)};
  });
}

Result<Stored<PaymentRow>> OrderStore::create_payment(const NewPayment& payment) {
  SEATFLOW_ASSERT(domain::is_id(payment.order_no));
  SEATFLOW_ASSERT(payment.payment_no.empty() || domain::is_id(payment.payment_no));
  return guarded("create_payment", [&]() -> Result<Stored<PaymentRow>> {
    const auto payment_no = payment.payment_no.empty() ? new_id("pay") : payment.payment_no;
    pqxx::work tx(pg_.connection());
    // The order row lock serialises concurrent creations for one order: the second one waits,
    // then sees the first one's payment below.
    const auto order = tx.exec_params(kLockOrderForPayment, payment.order_no);
    if (order.empty()) {
      return refused(errc::not_found, "unknown order");
    }
    const auto existing = tx.exec_params(kExistingPayment, payment.order_no);
    if (!existing.empty()) {
      const auto existing_no = existing[0][0].as<std::string>();
      // SPEC §16: the same orderNo, paymentNo and channel again is a retry of this creation (its
      // gateway is asked again with the same trade number); anything else is another payment.
      if (existing_no != payment.payment_no ||
          existing[0][1].as<std::string>() != payment.channel) {
        return refused(errc::conflict, "the order already has a payment",
                       {"paymentNo", existing_no});
      }
      tx.commit();
      return {Done::already, fetch_written(pg_, kPaymentRow, existing_no, payment_of)};
    }
    if (stored_order_status(order[0][0].as<int>()) != OrderStatus::pending) {
      return refused(errc::conflict, "the order is not pending");
    }
    if (order[0][3].as<std::int64_t>() != order[0][2].as<std::int64_t>()) {
      return refused(errc::conflict, "the order does not hold all its seats (seat conflict)");
    }
    const auto inserted = tx.exec_params(kInsertPayment, payment_no, payment.order_no,
                                         payment.channel, order[0][1].as<std::int64_t>());
    if (inserted.empty()) {
      return refused(errc::already_exists, "paymentNo already exists", {"paymentNo", payment_no});
    }
    if (query_first_step_ms_ > 0) {
      (void)tx.exec_params(kScheduleQuery, payment_no, query_first_step_ms_);
    }
    commit(tx, pg_.failpoints());
    return {Done::created, fetch_written(pg_, kPaymentRow, payment_no, payment_of)};
  });
}

Result<Stored<OrderRow>> OrderStore::get_order(const std::string& order_no) {
  SEATFLOW_ASSERT(domain::is_id(order_no));
  return guarded("get_order", [&]() -> Result<Stored<OrderRow>> {
    pqxx::read_transaction tx(pg_.connection());
    auto row = fetch(tx, kOrderRow, order_no, order_of);
    if (!row) {
      return refused(errc::not_found, "unknown order");
    }
    return {Done::ok, std::move(*row)};
  });
}

Result<Stored<PaymentRow>> OrderStore::get_payment(const std::string& payment_no) {
  SEATFLOW_ASSERT(domain::is_id(payment_no));
  return guarded("get_payment", [&]() -> Result<Stored<PaymentRow>> {
    pqxx::read_transaction tx(pg_.connection());
    auto row = fetch(tx, kPaymentRow, payment_no, payment_of);
    if (!row) {
      return refused(errc::not_found, "unknown payment");
    }
    return {Done::ok, std::move(*row)};
  });
}

Result<Stored<PaymentRow>> OrderStore::close_payment(const std::string& payment_no) {
  return end_payment(payment_no, close_end());
}

Result<Stored<PaymentRow>> OrderStore::refund_payment(const std::string& payment_no) {
  return end_payment(payment_no, refund_end());
}

Result<Stored<PaymentRow>> OrderStore::end_payment(const std::string& payment_no,
                                                   const PaymentEnd& end) {
  SEATFLOW_ASSERT(domain::is_id(payment_no));
  return guarded(end.operation, [&]() -> Result<Stored<PaymentRow>> {
    std::string show_id;
    std::string order_no;
    std::vector<std::string> seats;
    {
      // Payment first, then its order: the lock order of every writer.
      pqxx::work tx(pg_.connection());
      const auto payment = tx.exec_params(kLockPaymentByNo, payment_no);
      if (payment.empty()) {
        return refused(errc::not_found, "unknown payment");
      }
      const auto status = stored_payment_status(payment[0][0].as<int>());
      order_no = payment[0][1].as<std::string>();
      if (status == end.target) {
        tx.commit();
        return {Done::already, fetch_written(pg_, kPaymentRow, payment_no, payment_of)};
      }
      if (!domain::next_payment_status(status, end.payment_event)) {
        return refused(errc::conflict, std::string(end.refusal(status)));
      }
      const auto order = tx.exec_params(kLockOrderState, order_no);
      show_id = order[0][1].as<std::string>();
      seats = json_strings(order[0][2]);
      const auto moved = tx.exec_params(end.payment_cas, payment_no);
      // Both rows are locked, so the CAS cannot miss; a miss is a programmer error.
      assert(moved.size() == 1);
      (void)tx.exec_params(end.order_cas, order_no);
      (void)tx.exec_params(kReleaseClaims, show_id, to_pg_array(seats), order_no);
      commit(tx, pg_.failpoints());
    }
    release_after_commit(seats_, show_id, order_no, seats, end.seats_sold);
    return {Done::ok, fetch_written(pg_, kPaymentRow, payment_no, payment_of)};
  });
}

Result<Stored<std::vector<DiscrepancyRow>>> OrderStore::list_discrepancies(bool open_only,
                                                                           std::size_t limit) {
  return guarded("list_discrepancies", [&]() -> Result<Stored<std::vector<DiscrepancyRow>>> {
    pqxx::read_transaction tx(pg_.connection());
    std::vector<DiscrepancyRow> rows;
    for (const auto& row : tx.exec_params(kListDiscrepancies, open_only, limit)) {
      rows.push_back(discrepancy_row(row));
    }
    return {Done::ok, std::move(rows)};
  });
}

Result<Stored<ResolvedDiscrepancy>> OrderStore::resolve_discrepancy(std::int64_t id) {
  SEATFLOW_ASSERT(id > 0);
  return guarded("resolve_discrepancy", [&]() -> Result<Stored<ResolvedDiscrepancy>> {
    pqxx::work tx(pg_.connection());
    (void)tx.exec_params(sql::kLockPaymentOfDiscrepancy, id);
    const auto resolved = tx.exec_params(kResolveDiscrepancy, id);
    if (!resolved.empty()) {
      tx.commit();
      return {Done::ok, ResolvedDiscrepancy{id}};
    }
    if (tx.exec_params(sql::kDiscrepancyExists, id).empty()) {
      return refused(errc::not_found, "unknown discrepancy");
    }
    return {Done::already, ResolvedDiscrepancy{id}};
  });
}

Result<void> OrderStore::cancel_expired(const std::string& order_no) {
  SEATFLOW_ASSERT(domain::is_id(order_no));
  std::string show_id;
  std::vector<std::string> seats;
  {
    pqxx::work tx(pg_.connection());
    const auto payment = tx.exec_params(kPaymentOfOrder, order_no);
    const auto order = tx.exec_params(kLockOrderState, order_no);
    if (order.empty()) {
      return refused(errc::not_found, "unknown order");
    }
    const auto& end = close_end();
    const bool cancellable =
        domain::next_order_status(stored_order_status(order[0][0].as<int>()), end.order_event)
            .has_value();
    const bool expired = order[0][3].as<bool>();
    const bool paid = !payment.empty() &&
                      stored_payment_status(payment[0][1].as<int>()) == PaymentStatus::success;
    // A callback that committed first wins: its order is no longer pending, or its payment paid.
    if (!cancellable || paid || !expired) {
      return refused(errc::conflict, "not an expired pending order");
    }
    show_id = order[0][1].as<std::string>();
    seats = json_strings(order[0][2]);
    if (!payment.empty()) {
      (void)tx.exec_params(end.payment_cas, payment[0][0].as<std::string>());
    }
    const auto moved = tx.exec_params(end.order_cas, order_no);
    assert(moved.size() == 1);
    (void)tx.exec_params(kReleaseClaims, show_id, to_pg_array(seats), order_no);
    commit(tx, pg_.failpoints());
  }
  release_after_commit(seats_, show_id, order_no, seats, false);
  return {};
}

Result<std::vector<ExpiredOrder>> OrderStore::list_expired(std::size_t batch) {
  SEATFLOW_ASSERT(batch > 0);
  try {
    std::vector<ExpiredOrder> candidates;
    pqxx::read_transaction tx(pg_.connection());
    for (const auto& row : tx.exec_params(kExpiredOrders, batch)) {
      candidates.push_back({row[0].as<std::string>(), row[1].as<std::string>(),
                            domain::parse_channel(row[2].as<std::string>()),
                            row[3].as<std::int64_t>()});
    }
    return candidates;
  } catch (const std::exception& error) {
    return failure("sweep_list", error);
  }
}

Result<void> OrderStore::cancel_if_expired(const std::string& order_no) {
  SEATFLOW_ASSERT(domain::is_id(order_no));
  try {
    return cancel_expired(order_no);
  } catch (const std::exception& error) {
    return failure("sweep_cancel", error);
  }
}

}  // namespace seatflow::persistence

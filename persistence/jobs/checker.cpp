// Invariant checks: an order scan (status pairs, paid_at, each order's seats), a Redis scan (every
// seat field names an order that holds that seat and, for a live order, its claim) and set-based
// SQL checks (double sales, live seats without a claim, claims of finished orders, log rows,
// success callbacks neither applied nor recorded).
#include "persistence/jobs/checker.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "domain/callback_plan.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/stores/seat_scripts.hpp"
#include "persistence/stores/status_sql.hpp"

namespace seatflow::persistence {
namespace {

using domain::OrderStatus;
using domain::PaymentStatus;
using domain::SeatState;

constexpr const char* kCheckScanOrders =
    "SELECT o.order_no, o.status, o.show_id, to_json(o.seat_ids)::text, p.payment_no, p.status, "
    "       p.paid_at IS NOT NULL "
    "FROM order_info o LEFT JOIN payment_order p ON p.order_no = o.order_no "
    "WHERE o.order_no > $1 AND starts_with(o.order_no, $2) ORDER BY o.order_no LIMIT $3";
constexpr const char* kOrdersByNo =
    "SELECT order_no, show_id, status, to_json(seat_ids)::text FROM order_info "
    "WHERE order_no = ANY($1::text[])";
// The claiming order of each of a show's seats (SPEC §9); no row when unclaimed.
constexpr const char* kClaimsOfSeats =
    "SELECT c.seat_id, c.order_no FROM seat_claim c "
    "WHERE c.show_id = $1 AND c.seat_id = ANY($2::text[])";
// A live order's seat whose claim it does not hold (no order's, or another's), and a claim whose
// order is not live: both break the rule that a live order holds exactly its claims.
const std::string kUnclaimedLiveSeats =
    "SELECT o.show_id, s, o.order_no, COALESCE(c.order_no, '') FROM order_info o "
    "CROSS JOIN LATERAL unnest(o.seat_ids) AS s "
    "LEFT JOIN seat_claim c ON c.show_id = o.show_id AND c.seat_id = s "
    "WHERE " +
    status_sql::in("o.status", status_sql::live_orders()) +
    " AND starts_with(o.order_no, $1) "
    "  AND c.order_no IS DISTINCT FROM o.order_no "
    "ORDER BY o.show_id, s, o.order_no LIMIT $2";
const std::string kClaimsOfFinishedOrders =
    "SELECT c.show_id, c.seat_id, c.order_no, o.status FROM seat_claim c "
    "JOIN order_info o ON o.order_no = c.order_no "
    "WHERE " +
    status_sql::not_in("o.status", status_sql::live_orders()) +
    " AND starts_with(c.order_no, $1) "
    "ORDER BY c.show_id, c.seat_id LIMIT $2";
// The orders whose seats are sold (PAID).
const std::string kSoldTwice =
    "SELECT show_id, seat, string_agg(order_no, ',' ORDER BY order_no) FROM ("
    "  SELECT show_id, unnest(seat_ids) AS seat, order_no FROM order_info "
    "  WHERE " +
    status_sql::in("status", status_sql::orders_with_seats(SeatState::sold)) +
    " AND starts_with(order_no, $1)) s "
    "GROUP BY show_id, seat HAVING count(*) > 1 ORDER BY show_id, seat LIMIT $2";
constexpr const char* kOrphanLogRows =
    "SELECT l.callback_id, l.payment_no FROM payment_callback_log l "
    "WHERE starts_with(COALESCE(l.payment_no, ''), $1) AND NOT EXISTS "
    "  (SELECT 1 FROM payment_order p WHERE p.payment_no = l.payment_no) "
    "ORDER BY l.callback_id LIMIT $2";
// A success callback logged for a payment whose money was not taken.
const std::string kUnappliedSuccess =
    "SELECT l.callback_id, l.payment_no, p.status FROM payment_callback_log l "
    "JOIN payment_order p ON p.payment_no = l.payment_no "
    "WHERE l.status = " +
    std::to_string(domain::log_status_code(domain::CallbackKind::success)) + " AND " +
    status_sql::not_in("p.status", status_sql::money_taken_payments()) +
    " AND starts_with(l.payment_no, $1) "
    "  AND NOT EXISTS (SELECT 1 FROM payment_discrepancy d WHERE d.payment_no = l.payment_no "
    "                  AND d.kind IN ('paid_after_cancel', 'paid_after_refund')) "
    "ORDER BY l.callback_id LIMIT $2";

class Reporter {
 public:
  Reporter(CheckSummary& summary, const ViolationSink& sink) : summary_(summary), sink_(sink) {}
  void operator()(std::string kind, std::string subject, std::string detail) {
    ++summary_.violations;
    ++summary_.by_kind[kind];
    sink_(Violation{std::move(kind), std::move(subject), std::move(detail)});
  }

 private:
  CheckSummary& summary_;
  const ViolationSink& sink_;
};

std::string seat_shown(const std::string& value) {
  return value.empty() ? "free" : "'" + value + "'";
}

// One order of the order scan.
struct ScannedOrder {
  std::string order_no;
  OrderStatus status;
  std::string show_id;
  std::vector<std::string> seats;
};

// One row of kCheckScanOrders, its statuses checked: paid_at against the payment's status, and the
// (payment, order) pair against SPEC §4.
ScannedOrder scan_order(const pqxx::row& r, Reporter& report) {
  ScannedOrder row{r[0].as<std::string>(), stored_order_status(r[1].as<int>()),
                   r[2].as<std::string>(), json_strings(r[3])};
  std::optional<PaymentStatus> payment;
  if (!r[4].is_null()) {
    payment = stored_payment_status(r[5].as<int>());
    const bool paid_at = r[6].as<bool>();
    if (paid_at != domain::money_taken(*payment)) {
      report("paid_at_mismatch", r[4].as<std::string>(),
             "payment status " + status_sql::literal(*payment) +
                 (paid_at ? " has paid_at" : " has no paid_at"));
    }
  }
  if (!domain::is_legal_status_pair(payment, row.status)) {
    const bool success = payment == PaymentStatus::success;
    report(success ? "success_payment_order_not_paid" : "illegal_status_pair", row.order_no,
           "payment status " + (payment ? status_sql::literal(*payment) : std::string("none")) +
               ", order status " + status_sql::literal(row.status));
  }
  return row;
}

// The order's seats in Redis (`reply`, HMGET of its seats) against the state its status gives
// them (domain::seat_state_of).
void check_order_seats(const ScannedOrder& row, const RedisReply& reply, Reporter& report) {
  const auto locked = locked_seat(row.order_no);
  const auto sold = sold_seat(row.order_no);
  for (std::size_t s = 0; s < row.seats.size() && s < reply.elements.size(); ++s) {
    const auto& value = reply.elements[s].str;
    const auto where = row.show_id + "/" + row.seats[s];
    const auto detail = "order " + row.order_no + " (status " + status_sql::literal(row.status) +
                        ") seat is " + seat_shown(value);
    switch (domain::seat_state_of(row.status)) {
      case SeatState::sold:
        if (value != sold) {
          report("paid_seat_not_sold", where, detail + ", expected '" + sold + "'");
        }
        break;
      case SeatState::free:
        if (value == locked || value == sold) {
          report("finished_order_holds_seat", where, detail + ", expected free");
        }
        break;
      case SeatState::locked:
        if (value == sold) {
          report("pending_order_seat_sold", where, detail + ", expected '" + locked + "'");
        } else if (value != locked) {
          report("pending_seat_not_locked", where, detail + ", expected '" + locked + "'");
        }
        break;
    }
  }
}

// The order scan; errc::redis_unavailable when Redis fails (PostgreSQL's failures throw, as
// libpqxx does, and become the check's failure at check_invariants).
Result<void> check_orders(pqxx::connection& conn, RedisClient& redis, const CheckOptions& options,
                          CheckSummary& summary, Reporter& report) {
  std::string after;
  for (;;) {
    std::vector<ScannedOrder> rows;
    {
      pqxx::read_transaction tx(conn);
      for (const auto& r :
           tx.exec_params(kCheckScanOrders, after, options.scope_prefix, options.batch)) {
        rows.push_back(scan_order(r, report));
      }
    }
    summary.orders += rows.size();
    if (rows.empty()) {
      return {};
    }
    std::vector<std::vector<std::string>> cmds;
    for (const auto& row : rows) {
      std::vector<std::string> cmd = {"HMGET", seat_key(row.show_id)};
      cmd.insert(cmd.end(), row.seats.begin(), row.seats.end());
      cmds.push_back(std::move(cmd));
    }
    const auto replies = redis.pipeline(cmds);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!replies[i].ok) {
        return refused(errc::redis_unavailable, "redis: " + replies[i].error);
      }
      check_order_seats(rows[i], replies[i], report);
    }
    if (rows.size() < options.batch) {
      return {};
    }
    after = rows.back().order_no;
  }
}

// A glob that matches exactly the keys whose show id starts with `prefix`.
std::string key_pattern(const std::string& prefix) {
  std::string out(kSeatKeyHead);
  for (const char c : prefix) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  return out + "*";
}

// One HSCAN page of one show: each field must name an existing order of that show that lists the
// seat, and a live order's value must match the seat's claim (SPEC §9: no field without a matching
// live claim). A finished order's value is reported by the order scan (finished_order_holds_seat).
void check_fields(pqxx::connection& conn, const std::string& show_id,
                  const std::vector<std::pair<std::string, std::string>>& fields,
                  CheckSummary& summary, Reporter& report) {
  summary.seat_fields += fields.size();
  std::vector<std::string> order_nos;
  std::vector<std::string> seat_ids;
  for (const auto& [seat, value] : fields) {
    if (value.size() > 2 && (value[0] == '1' || value[0] == '2') && value[1] == ':') {
      order_nos.push_back(value.substr(2));
      seat_ids.push_back(seat);
    } else {
      report("seat_value_malformed", show_id + "/" + seat, "value " + seat_shown(value));
    }
  }
  if (order_nos.empty()) {
    return;
  }
  struct OrderFacts {
    std::string show_id;
    int status = 0;
    std::vector<std::string> seats;
  };
  std::unordered_map<std::string, OrderFacts> orders;
  std::unordered_map<std::string, std::string> claims;  // seat → claiming order
  {
    pqxx::read_transaction tx(conn);
    for (const auto& r : tx.exec_params(kOrdersByNo, to_pg_array(order_nos))) {
      orders.emplace(r[0].as<std::string>(),
                     OrderFacts{r[1].as<std::string>(), r[2].as<int>(), json_strings(r[3])});
    }
    for (const auto& r : tx.exec_params(kClaimsOfSeats, show_id, to_pg_array(seat_ids))) {
      claims.emplace(r[0].as<std::string>(), r[1].as<std::string>());
    }
  }
  for (const auto& [seat, value] : fields) {
    if (value.size() <= 2 || value[1] != ':') {
      continue;
    }
    const auto order_no = value.substr(2);
    const auto where = show_id + "/" + seat;
    const auto it = orders.find(order_no);
    if (it == orders.end()) {
      report("seat_names_unknown_order", where, "value " + seat_shown(value));
      continue;
    }
    const auto& facts = it->second;
    if (facts.show_id != show_id ||
        std::find(facts.seats.begin(), facts.seats.end(), seat) == facts.seats.end()) {
      report("seat_names_order_without_that_seat", where,
             "value " + seat_shown(value) + " but the order holds show " + facts.show_id);
      continue;
    }
    const bool live = domain::seat_state_of(stored_order_status(facts.status)) != SeatState::free;
    const auto claim = claims.find(seat);
    if (live && (claim == claims.end() || claim->second != order_no)) {
      report("seat_without_live_claim", where,
             "value " + seat_shown(value) + " but the seat is claimed by " +
                 (claim == claims.end() ? std::string("no order") : "order " + claim->second));
    }
  }
}

Result<void> check_seat_hashes(pqxx::connection& conn, RedisClient& redis,
                               const CheckOptions& options, CheckSummary& summary,
                               Reporter& report) {
  const auto count = std::to_string(options.batch);
  const auto pattern = key_pattern(options.scope_prefix);
  std::string cursor = "0";
  do {
    const auto scan = redis.command({"SCAN", cursor, "MATCH", pattern, "COUNT", count});
    if (!scan.ok || scan.elements.size() != 2) {
      return refused(errc::redis_unavailable, "redis SCAN: " + scan.error);
    }
    cursor = scan.elements[0].str;
    for (const auto& key_reply : scan.elements[1].elements) {
      const auto& key = key_reply.str;
      if (!key.ends_with('}')) {
        continue;
      }
      const auto show_id = key.substr(kSeatKeyHead.size(), key.size() - kSeatKeyHead.size() - 1);
      std::string field_cursor = "0";
      do {
        const auto page = redis.command({"HSCAN", key, field_cursor, "COUNT", count});
        if (!page.ok || page.elements.size() != 2) {
          return refused(errc::redis_unavailable, "redis HSCAN: " + page.error);
        }
        field_cursor = page.elements[0].str;
        std::vector<std::pair<std::string, std::string>> fields;
        const auto& items = page.elements[1].elements;
        for (std::size_t k = 0; k + 1 < items.size(); k += 2) {
          fields.emplace_back(items[k].str, items[k + 1].str);
        }
        check_fields(conn, show_id, fields, summary, report);
      } while (field_cursor != "0");
    }
  } while (cursor != "0");
  return {};
}

void check_sql(pqxx::connection& conn, const CheckOptions& options, Reporter& report) {
  pqxx::read_transaction tx(conn);
  const auto limit = options.max_per_query;
  for (const auto& r : tx.exec_params(kSoldTwice, options.scope_prefix, limit)) {
    report("seat_sold_twice", r[0].as<std::string>() + "/" + r[1].as<std::string>(),
           "PAID orders " + r[2].as<std::string>());
  }
  for (const auto& r : tx.exec_params(kUnclaimedLiveSeats, options.scope_prefix, limit)) {
    const auto holder = r[3].as<std::string>();
    report("live_order_seat_not_claimed", r[0].as<std::string>() + "/" + r[1].as<std::string>(),
           "order " + r[2].as<std::string>() + " lists the seat, which " +
               (holder.empty() ? std::string("no order claims") : "order " + holder + " claims"));
  }
  for (const auto& r : tx.exec_params(kClaimsOfFinishedOrders, options.scope_prefix, limit)) {
    report("claim_of_finished_order", r[0].as<std::string>() + "/" + r[1].as<std::string>(),
           "order " + r[2].as<std::string>() + " (status " + r[3].as<std::string>() +
               ") still claims the seat");
  }
  for (const auto& r : tx.exec_params(kOrphanLogRows, options.scope_prefix, limit)) {
    report("log_row_without_payment", r[0].as<std::string>(),
           "payment " + r[1].as<std::string>("(null)") + " does not exist");
  }
  for (const auto& r : tx.exec_params(kUnappliedSuccess, options.scope_prefix, limit)) {
    report("success_callback_not_applied", r[0].as<std::string>(),
           "payment " + r[1].as<std::string>() + " is in status " + r[2].as<std::string>() +
               " and no paid_after_cancel/paid_after_refund discrepancy exists");
  }
}

}  // namespace

Result<CheckSummary> check_invariants(pqxx::connection& conn, RedisClient& redis,
                                      const CheckOptions& options, const ViolationSink& sink) {
  CheckSummary summary;
  Reporter report(summary, sink);
  CheckOptions bounded = options;
  bounded.batch = std::max<std::size_t>(1, bounded.batch);
  try {
    if (auto orders = check_orders(conn, redis, bounded, summary, report); !orders.ok()) {
      return std::move(orders).failure();
    }
    if (auto seats = check_seat_hashes(conn, redis, bounded, summary, report); !seats.ok()) {
      return std::move(seats).failure();
    }
    check_sql(conn, bounded, report);
  } catch (const std::exception& error) {
    // libpqxx's text names the server and the statement, never a value of a row.
    return refused(errc::pg_unavailable, std::string("postgresql: ") + error.what());
  }
  return summary;
}

}  // namespace seatflow::persistence

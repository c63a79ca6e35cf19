// Reconciler: keyset scan of orders per phase, HMGET comparison, share-locked CAS repairs.
#include "persistence/jobs/reconciler.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "persistence/drivers/log.hpp"
#include "persistence/stores/seat_scripts.hpp"
#include "persistence/stores/sql.hpp"
#include "persistence/stores/status_sql.hpp"

namespace seatflow::persistence {

namespace {

// Each order with the seats it claims (SPEC §9: the truth for Redis). A finished order has none.
constexpr const char* kReconcileScanOrders =
    "SELECT o.order_no, o.show_id, to_json(o.seat_ids)::text, "
    "  COALESCE((SELECT json_agg(c.seat_id) FROM seat_claim c "
    "            WHERE c.order_no = o.order_no AND c.show_id = o.show_id), '[]')::text "
    "FROM order_info o "
    "WHERE o.status = ANY($1::smallint[]) AND o.order_no > $2 AND starts_with(o.order_no, $3) "
    "ORDER BY o.order_no LIMIT $4";
// Payment row before order row, as everywhere else; FOR SHARE blocks a close, refund, sweep or
// callback of this order until the repair is committed, and waits for one in progress.
constexpr const char* kSharePayment =
    "SELECT payment_no FROM payment_order WHERE order_no = $1 FOR SHARE";
constexpr const char* kShareOrder =
    "SELECT status, show_id, to_json(seat_ids)::text FROM order_info WHERE order_no = $1 "
    "FOR SHARE";
// Under the order's share lock (which every move to CANCELLED or REFUNDED waits for): a live order
// takes any of its seats that nobody claims (a claim lost by hand; the invariant is that a live
// order holds all of them), then each listed seat with the order that claims it.
constexpr const char* kClaimMissing =
    "INSERT INTO seat_claim (show_id, seat_id, order_no, claimed_at) "
    "SELECT $1, s, $2, now() FROM unnest($3::text[]) AS s ORDER BY s "
    "ON CONFLICT (show_id, seat_id) DO NOTHING";
constexpr const char* kClaimHolders =
    "SELECT s, c.order_no FROM unnest($2::text[]) AS s "
    "JOIN seat_claim c ON c.show_id = $1 AND c.seat_id = s";
// A finished order holds no claim; one left behind (by hand) is dropped.
constexpr const char* kDropClaims = "DELETE FROM seat_claim WHERE order_no = $1";

// The state a phase's orders give their seats (domain::seat_state_of).
domain::SeatState phase_seats(ReconcilePhase phase) {
  switch (phase) {
    case ReconcilePhase::paid:
      return domain::SeatState::sold;
    case ReconcilePhase::finished:
      return domain::SeatState::free;
    case ReconcilePhase::pending:
    case ReconcilePhase::done:
      break;
  }
  return domain::SeatState::locked;
}

// The order statuses a phase scans, as a ::smallint[] parameter.
std::string phase_statuses(ReconcilePhase phase) {
  return to_pg_array(status_sql::codes(status_sql::orders_with_seats(phase_seats(phase))));
}

// A seat repair that ran, or the failure that rolls the repair's transaction back (returned before
// the commit).
Result<SeatRepair> ran(Result<SeatRepair> repair) {
  if (!repair.ok()) {
    return refused(errc::redis_unavailable, "redis unavailable");
  }
  return repair;
}

}  // namespace

void ReconcileStats::add(const ReconcileStats& other) {
  orders_scanned += other.orders_scanned;
  orders_repaired += other.orders_repaired;
  seats_sold += other.seats_sold;
  seats_released += other.seats_released;
  seats_relocked += other.seats_relocked;
  seat_conflicts += other.seat_conflicts;
  pending_conflicts += other.pending_conflicts;
  errors += other.errors;
  if (!other.last_error.empty()) {
    last_error = other.last_error;
  }
}

ReconcileProbe::ReconcileProbe(observability::Registry& registry)
    : ReconcileProbe(registry, registry.counter("seatflow_reconcile_repairs_total",
                                                "Seat repairs by the reconciler, by kind.")) {}

ReconcileProbe::ReconcileProbe(observability::Registry& registry,
                               prometheus::Family<prometheus::Counter>& repairs)
    : seats_sold(repairs.Add({{"kind", "seat_sold"}})),
      seats_released(repairs.Add({{"kind", "seat_released"}})),
      seats_relocked(repairs.Add({{"kind", "seat_relocked"}})),
      seat_conflicts(repairs.Add({{"kind", "seat_conflict"}})),
      passes(registry.counter("seatflow_reconcile_passes_total", "Full passes of the reconciler.")
                 .Add({})),
      errors(registry
                 .counter("seatflow_reconcile_errors_total",
                          "Reconciler batches cut short by a store error.")
                 .Add({})) {}

Reconciler::Reconciler(PgSession& pg, RedisClient& redis, ReconcileOptions options,
                       ReconcileProbe* counters)
    : pg_(pg), redis_(redis), options_(std::move(options)), counters_(counters), seats_(redis) {
  options_.batch = std::max<std::size_t>(1, options_.batch);
}

ReconcileStats Reconciler::step(ReconcileCursor& cursor) {
  ReconcileStats stats;
  if (cursor.phase == ReconcilePhase::done) {
    cursor = {};
  }
  try {
    std::vector<OrderRow> rows;
    {
      pqxx::read_transaction tx(pg_.connection());
      const auto result = tx.exec_params(kReconcileScanOrders, phase_statuses(cursor.phase),
                                         cursor.after, options_.scope_prefix, options_.batch);
      rows.reserve(result.size());
      for (const auto& row : result) {
        rows.push_back({row[0].as<std::string>(), row[1].as<std::string>(), json_strings(row[2]),
                        json_strings(row[3])});
      }
    }
    if (const auto scanned = scan_batch(cursor.phase, rows, stats); !scanned.ok()) {
      // Redis failed: a repair it cut short rolled its transaction back.
      if (!pg_.connected()) {
        pg_.reset();
      }
      batch_failed(stats, scanned.detail());
    } else if (rows.size() < options_.batch) {
      cursor.phase = static_cast<ReconcilePhase>(static_cast<int>(cursor.phase) + 1);
      cursor.after.clear();
    } else {
      cursor.after = rows.back().order_no;
    }
  } catch (const std::exception& error) {
    if (!pg_.connected() || dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr) {
      pg_.reset();
    }
    batch_failed(stats, classify(error) == PgErrorClass::retryable ? "postgresql unavailable"
                                                                   : "postgresql error");
  }
  publish(stats);
  if (cursor.phase == ReconcilePhase::done && counters_ != nullptr) {
    counters_->passes.Increment();
  }
  return stats;
}

void Reconciler::batch_failed(ReconcileStats& stats, std::string reason) {
  ++stats.errors;
  stats.last_error = std::move(reason);
  logger().warn("event=reconcile_batch_failed reason={}", quoted_value(stats.last_error));
}

ReconcileStats Reconciler::run_pass() {
  ReconcileCursor cursor;
  ReconcileStats total;
  while (cursor.phase != ReconcilePhase::done) {
    const auto stats = step(cursor);
    total.add(stats);
    if (stats.errors > 0) {
      break;
    }
  }
  return total;
}

Result<void> Reconciler::scan_batch(ReconcilePhase phase, const std::vector<OrderRow>& rows,
                                    ReconcileStats& stats) {
  stats.orders_scanned += rows.size();
  if (rows.empty()) {
    return {};
  }
  std::vector<std::vector<std::string>> cmds;
  cmds.reserve(rows.size());
  for (const auto& row : rows) {
    std::vector<std::string> cmd = {"HMGET", seat_key(row.show_id)};
    cmd.insert(cmd.end(), row.seats.begin(), row.seats.end());
    cmds.push_back(std::move(cmd));
  }
  const auto replies = redis_.pipeline(cmds);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& reply = replies[i];
    if (!reply.ok) {
      return refused(errc::redis_unavailable, "redis unavailable");
    }
    const auto& row = rows[i];
    const auto locked = locked_seat(row.order_no);
    const auto sold = sold_seat(row.order_no);
    // A live order whose listed seats are not all its claims is looked at under the locks.
    bool needs = phase != ReconcilePhase::finished ? row.claimed.size() != row.seats.size()
                                                   : !row.claimed.empty();
    for (std::size_t k = 0; k < reply.elements.size() && k < row.seats.size(); ++k) {
      const auto& value = reply.elements[k];
      const bool claimed =
          std::find(row.claimed.begin(), row.claimed.end(), row.seats[k]) != row.claimed.end();
      switch (phase) {
        case ReconcilePhase::paid:
          needs = needs || (claimed && (value.is_nil || value.str != sold));
          break;
        case ReconcilePhase::finished:
          needs = needs || (!value.is_nil && (value.str == locked || value.str == sold));
          break;
        case ReconcilePhase::pending:
        case ReconcilePhase::done:
          needs =
              needs || (claimed && (value.is_nil || (value.str != locked && value.str != sold)));
          break;
      }
    }
    if (needs) {
      if (auto repaired = repair(rows[i], stats); !repaired.ok()) {
        return repaired;
      }
    }
  }
  return {};
}

Result<void> Reconciler::repair(const OrderRow& row, ReconcileStats& stats) {
  pqxx::work tx(pg_.connection());
  const auto payment = tx.exec_params(kSharePayment, row.order_no);
  const auto order = tx.exec_params(kShareOrder, row.order_no);
  if (order.empty()) {
    return {};
  }
  // The status as of now, under the locks; the scan's snapshot may be stale.
  const int status = order[0][0].as<int>();
  const auto seat_state = domain::seat_state_of(stored_order_status(status));
  const auto show_id = order[0][1].as<std::string>();
  const auto seats = json_strings(order[0][2]);
  std::uint64_t changed = 0;
  if (seat_state == domain::SeatState::free) {
    (void)tx.exec_params(kDropClaims, row.order_no);
    const auto released =
        ran(seats_.repair(domain::SeatOp::repair_free, show_id, row.order_no, seats));
    if (!released.ok()) {
      return released.failure();
    }
    changed = static_cast<std::uint64_t>(released.value().changed);
    stats.seats_released += changed;
    tx.commit();
  } else {
    const auto repaired =
        repair_live(tx, row.order_no, seat_state == domain::SeatState::sold, show_id, seats,
                    payment.empty() ? std::string() : payment[0][0].as<std::string>(), stats);
    if (!repaired.ok()) {
      return repaired.failure();
    }
    changed = repaired.value();
  }
  if (changed > 0) {
    ++stats.orders_repaired;
    logger().info("event=reconcile_repair order_no={} status={} seats_changed={}",
                  quoted_value(row.order_no), status, changed);
  }
  return {};
}

Result<std::uint64_t> Reconciler::repair_live(pqxx::work& tx, const std::string& order_no,
                                              bool paid, const std::string& show_id,
                                              const std::vector<std::string>& seats,
                                              const std::string& payment_no,
                                              ReconcileStats& stats) {
  const auto listed = to_pg_array(seats);
  (void)tx.exec_params(kClaimMissing, show_id, order_no, listed);
  std::vector<std::string> mine;
  nlohmann::json others = nlohmann::json::array();
  for (const auto& claim : tx.exec_params(kClaimHolders, show_id, listed)) {
    const auto seat = claim[0].as<std::string>();
    const auto holder = claim[1].as<std::string>();
    if (holder == order_no) {
      mine.push_back(seat);
    } else {
      others.push_back({{"seat_id", seat}, {"holder", holder}});
    }
  }
  // The claims decide: this order's claimed seats get its value whatever Redis holds (an order
  // named there without the claim holds the seat by mistake); another order's claimed seat is
  // never touched.
  const auto ran_repair = ran(seats_.repair(
      paid ? domain::SeatOp::repair_sold : domain::SeatOp::repair_locked, show_id, order_no, mine));
  if (!ran_repair.ok()) {
    return ran_repair.failure();
  }
  const auto& repaired = ran_repair.value();
  const auto changed = static_cast<std::uint64_t>(repaired.changed);
  (paid ? stats.seats_sold : stats.seats_relocked) += changed;
  for (const auto& [seat, value] : repaired.taken) {
    logger().warn("event=seat_taken_back order_no={} seat_id={} redis_value={}",
                  quoted_value(order_no), quoted_value(seat), quoted_value(value));
  }
  if (!others.empty() && paid && !payment_no.empty()) {
    const nlohmann::json detail = {
        {"show_id", show_id}, {"seats", others}, {"source", "reconciler"}};
    const auto inserted = tx.exec_prepared(std::string(sql::kInsertDiscrepancy), payment_no,
                                           order_no, std::string("seat_conflict"), detail.dump());
    // The statement returns the row it inserted (and writes its outbox event); none when an open
    // seat_conflict row already exists.
    if (inserted.size() == 1) {
      ++stats.seat_conflicts;
      logger().warn("event=seat_conflict payment_no={} order_no={} seats_claimed_by_others={}",
                    quoted_value(payment_no), quoted_value(order_no), others.size());
    }
  } else if (!others.empty() && !paid) {
    ++stats.pending_conflicts;
    logger().warn("event=pending_seat_conflict order_no={} seats_claimed_by_others={}",
                  quoted_value(order_no), others.size());
  }
  tx.commit();
  return changed;
}

void Reconciler::publish(const ReconcileStats& stats) {
  if (counters_ == nullptr) {
    return;
  }
  counters_->seats_sold.Increment(static_cast<double>(stats.seats_sold));
  counters_->seats_released.Increment(static_cast<double>(stats.seats_released));
  counters_->seats_relocked.Increment(static_cast<double>(stats.seats_relocked));
  counters_->seat_conflicts.Increment(static_cast<double>(stats.seat_conflicts));
  counters_->errors.Increment(static_cast<double>(stats.errors));
}

}  // namespace seatflow::persistence

// SPEC §6 carried out set-based: lock payments and orders, screen, upsert log rows, plan each
// callback (domain::plan_callback), run each kind of move as one statement, sell seats in one Redis
// pipeline, commit; then answer each callback with its plan's outcome.
#include "persistence/stores/callback_executor.hpp"

#include <algorithm>
#include <cassert>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "domain/callback_plan.hpp"
#include "persistence/drivers/log.hpp"
#include "persistence/stores/seat_scripts.hpp"
#include "persistence/stores/sql.hpp"

namespace seatflow::persistence {
namespace {

using domain::CallbackOutcome;
using domain::CallbackResult;

// The warm-up's batch: keys of a typical batch's count, each statement run this many times
// (PostgreSQL plans the first five executions of a prepared statement for their arguments).
constexpr std::size_t kWarmUpKeys = 32;
constexpr int kWarmUpRounds = 6;

template <class Status>
std::int64_t code(Status status) {
  return static_cast<std::int64_t>(status);
}

// The locked rows of one transaction, by key, and their ctids (what the moves address them by).
struct Locked {
  std::unordered_map<std::string, domain::LockedPayment> payments;
  std::unordered_map<std::string, domain::LockedOrder> orders;
  std::unordered_map<std::string, std::string> payment_rows;
  std::unordered_map<std::string, std::string> order_rows;
};

// Step 0: the payments and their orders, each order locked right after its payment.
void lock_payments_and_orders(pqxx::work& tx, const std::vector<std::string>& payment_nos,
                              Locked& locked) {
  for (const auto& row :
       tx.exec_prepared(std::string(sql::kBatchLockPaymentsAndOrders), to_pg_array(payment_nos))) {
    const auto status = domain::payment_status_from_int(row[1].as<int>());
    const auto channel = domain::parse_channel(row[2].as<std::string>());
    const auto order_status = domain::order_status_from_int(row[7].as<int>());
    // The CHECK constraints bound these columns.
    assert(status && channel && order_status);
    auto key = row[0].as<std::string>();
    auto order_no = row[4].as<std::string>();
    locked.payment_rows.emplace(key, row[6].as<std::string>());
    locked.order_rows.emplace(order_no, row[10].as<std::string>());
    locked.orders.emplace(order_no, domain::LockedOrder{*order_status, row[8].as<std::string>(),
                                                        json_strings(row[9])});
    locked.payments.emplace(std::move(key),
                            domain::LockedPayment{*status, *channel, row[3].as<std::int64_t>(),
                                                  std::move(order_no), row[5].as<std::string>()});
  }
}

// Lower-case hex of `bytes`, for decode(…, 'hex') on the server.
std::string hex_encode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 0x0f]);
  }
  return out;
}

// The raw headers as a JSON object ("" for none: stored as NULL).
std::string headers_json(const domain::RawRequest& raw) {
  if (raw.headers.empty()) {
    return {};
  }
  nlohmann::json headers = nlohmann::json::object();
  for (const auto& [name, value] : raw.headers) {
    headers[name] = value;
  }
  // Header values are bytes off the wire; replace what is not UTF-8 rather than throw.
  return headers.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Step 1 for the accepted callbacks: what the log upsert found for each callback id. A first
// delivery's row records the result and HTTP status of its plan as a first delivery (the plan is
// pure, so it is computed before the row exists) and its raw request (SPEC §12); a copy changes
// only the duplicates' count.
std::unordered_map<std::string, domain::LogFinding> upsert_logs(
    pqxx::work& tx, const std::vector<domain::VerifiedCallback>& batch,
    const std::vector<std::size_t>& accepted, const Locked& locked, StatusOf status_of) {
  std::vector<std::string> ids, channels, payment_nos, digests, results, bodies, headers;
  std::vector<std::int64_t> statuses, http_statuses;
  // Rows are upserted (and existing ones locked) in callback_id order, the order of the duplicate
  // flush's locks (sql::kBatchLockLogs): two transactions never wait for each other in a cycle.
  auto in_id_order = accepted;
  std::sort(in_id_order.begin(), in_id_order.end(), [&](std::size_t a, std::size_t b) {
    return batch[a].callback_id < batch[b].callback_id;
  });
  for (const auto i : in_id_order) {
    const auto& callback = batch[i];
    ids.push_back(callback.callback_id);
    channels.emplace_back(domain::to_string(callback.channel));
    payment_nos.push_back(callback.payment_no);
    statuses.push_back(domain::log_status_code(callback.kind));
    digests.push_back(callback.payload_sha256);
    const auto& payment = locked.payments.at(callback.payment_no);
    const auto result = domain::plan_callback(callback, payment, locked.orders.at(payment.order_no),
                                              domain::LogFinding::first_delivery)
                            .outcome.result;
    results.emplace_back(domain::to_string(result));
    http_statuses.push_back(status_of(result));
    // Hex in the text array: the body is bytes, which a text array literal cannot carry as such.
    bodies.push_back(callback.raw ? hex_encode(callback.raw->body) : std::string());
    headers.push_back(callback.raw ? headers_json(*callback.raw) : std::string());
  }
  std::unordered_map<std::string, domain::LogFinding> found;
  for (const auto i : accepted) {
    found.emplace(batch[i].callback_id, domain::LogFinding::conflict);
  }
  for (const auto& row :
       tx.exec_prepared(std::string(sql::kBatchUpsertLogs), to_pg_array(ids), to_pg_array(channels),
                        to_pg_array(payment_nos), to_pg_array(statuses), to_pg_array(digests),
                        to_pg_array(results), to_pg_array(http_statuses), to_pg_array(bodies),
                        to_pg_array(headers))) {
    found[row[0].as<std::string>()] =
        row[1].as<bool>() ? domain::LogFinding::first_delivery : domain::LogFinding::copy;
  }
  return found;
}

// The moves of all plans, one array set per statement.
struct MoveArrays {
  std::vector<std::string> keys;
  std::vector<std::int64_t> from, to;
  // The channel trade numbers of payments moved into SUCCESS, the payment of each order moved to
  // PAID (its event names it); the move into FAILED has none.
  std::vector<std::string> extra;
  // The ctid each row was locked at.
  std::vector<std::string> rows;
  [[nodiscard]] bool empty() const { return keys.empty(); }
};

// Runs one move statement and asserts that every planned row moved: the rows are locked, so a
// miss is a programmer error, not an operating one.
void run_moves(pqxx::work& tx, std::string_view statement, const MoveArrays& moves) {
  if (moves.empty()) {
    return;
  }
  const auto moved =
      tx.exec_prepared(std::string(statement), to_pg_array(moves.keys), to_pg_array(moves.from),
                       to_pg_array(moves.to), to_pg_array(moves.rows));
  assert(moved.size() == moves.keys.size() && "a CAS on a locked row missed");
  (void)moved;
}

// The payments into SUCCESS and the orders into PAID in one statement, asserted like run_moves.
void run_succeeded_and_paid(pqxx::work& tx, const MoveArrays& payments, const MoveArrays& orders) {
  if (payments.empty() && orders.empty()) {
    return;
  }
  const auto counts = tx.exec_prepared(
      std::string(sql::kBatchMoveSucceededAndPaid), to_pg_array(payments.keys),
      to_pg_array(payments.from), to_pg_array(payments.to), to_pg_array(payments.extra),
      to_pg_array(payments.rows), to_pg_array(orders.keys), to_pg_array(orders.from),
      to_pg_array(orders.to), to_pg_array(orders.extra), to_pg_array(orders.rows));
  assert(counts.size() == 1 && counts[0][0].as<std::size_t>() == payments.keys.size() &&
         counts[0][1].as<std::size_t>() == orders.keys.size() && "a CAS on a locked row missed");
  (void)counts;
}

struct Sale {
  std::size_t index;
  const domain::LockedPayment* payment;
  const domain::LockedOrder* order;
};

// mark_sold for every sale in one pipeline (the mark_sold failpoint fails a sale before it is
// sent); returns the callbacks whose sale failed.
std::vector<std::size_t> sell(SeatStore& seats, const std::vector<Sale>& sales,
                              Failpoints* failpoints) {
  std::vector<std::size_t> failed;
  std::vector<SeatSale> sent;
  std::vector<std::size_t> sent_index;
  for (const auto& sale : sales) {
    if (failpoints != nullptr && failpoints->hit(FailpointId::mark_sold)) {
      failed.push_back(sale.index);
      continue;
    }
    sent.push_back({sale.order->show_id, sale.payment->order_no, &sale.order->seat_ids});
    sent_index.push_back(sale.index);
  }
  for (const auto k : seats.mark_sold_all(sent)) {
    failed.push_back(sent_index[k]);
  }
  return failed;
}

void log_outcome(const domain::VerifiedCallback& callback, const domain::CallbackPlan& plan,
                 const domain::LockedPayment& payment) {
  if (plan.outcome.result == CallbackResult::conflict) {
    logger().error("event=callback_conflict payment_no={} callback_id={} reason=digest_differs",
                   quoted_value(callback.payment_no), quoted_value(callback.callback_id));
  } else if (plan.discrepancy) {
    logger().warn("event=payment_discrepancy kind={} payment_no={} order_no={}",
                  plan.discrepancy->kind, quoted_value(callback.payment_no),
                  quoted_value(payment.order_no));
  }
}

// Step 0: the callbacks at `live` that go on to their log rows; a rejected one gets its outcome
// and leaves no row.
std::vector<std::size_t> screen_batch(const std::vector<domain::VerifiedCallback>& batch,
                                      const std::vector<std::size_t>& live, const Locked& locked,
                                      std::vector<CallbackOutcome>& outcomes) {
  std::vector<std::size_t> accepted;
  for (const auto i : live) {
    const auto it = locked.payments.find(batch[i].payment_no);
    const auto* payment = it == locked.payments.end() ? nullptr : &it->second;
    if (auto rejection = domain::screen_callback(batch[i], payment)) {
      if (payment != nullptr && batch[i].amount_cents &&
          *batch[i].amount_cents != payment->amount_cents) {
        logger().error("event=amount_mismatch payment_no={} expected_cents={} callback_cents={}",
                       quoted_value(batch[i].payment_no), payment->amount_cents,
                       *batch[i].amount_cents);
      }
      outcomes[i] = std::move(*rejection);
      continue;
    }
    accepted.push_back(i);
  }
  return accepted;
}

// Steps 2-3 for a batch: one plan per callback, and what the plans write, as statement arrays.
struct PlannedBatch {
  std::vector<std::pair<std::size_t, domain::CallbackPlan>> plans;
  MoveArrays succeeded, failed_moves, orders_paid;
  std::vector<std::string> disc_payments, disc_orders, disc_kinds, disc_details;
  std::vector<Sale> sales;
};

// Adds one plan's moves, discrepancy and sale to the batch's arrays.
void add_plan_writes(const domain::VerifiedCallback& callback, std::size_t i,
                     const domain::CallbackPlan& plan, const Locked& locked,
                     const domain::LockedPayment& payment, const domain::LockedOrder& order,
                     PlannedBatch& out) {
  if (plan.payment_move) {
    auto& target =
        plan.payment_move->to == domain::PaymentStatus::success ? out.succeeded : out.failed_moves;
    target.keys.push_back(callback.payment_no);
    target.from.push_back(code(plan.payment_move->from));
    target.to.push_back(code(plan.payment_move->to));
    target.extra.push_back(callback.channel_trade_no);
    target.rows.push_back(locked.payment_rows.at(callback.payment_no));
  }
  if (plan.order_move) {
    out.orders_paid.keys.push_back(payment.order_no);
    out.orders_paid.from.push_back(code(plan.order_move->from));
    out.orders_paid.to.push_back(code(plan.order_move->to));
    out.orders_paid.extra.push_back(callback.payment_no);
    out.orders_paid.rows.push_back(locked.order_rows.at(payment.order_no));
  }
  if (plan.discrepancy) {
    out.disc_payments.push_back(callback.payment_no);
    out.disc_orders.push_back(payment.order_no);
    out.disc_kinds.emplace_back(plan.discrepancy->kind);
    // The late callback's trade number: a gateway refund of the discrepancy gives back that trade.
    nlohmann::json detail{{"callback_id", callback.callback_id},
                          {"payment_status", code(plan.discrepancy->payment_status)},
                          {"order_status", code(plan.discrepancy->order_status)}};
    if (!callback.channel_trade_no.empty()) {
      detail["channel_trade_no"] = callback.channel_trade_no;
    }
    out.disc_details.push_back(detail.dump());
  }
  if (plan.sell) {
    out.sales.push_back({i, &payment, &order});
  }
}

PlannedBatch plan_batch(const std::vector<domain::VerifiedCallback>& batch,
                        const std::vector<std::size_t>& accepted, const Locked& locked,
                        const std::unordered_map<std::string, domain::LogFinding>& logs) {
  PlannedBatch out;
  for (const auto i : accepted) {
    const auto& callback = batch[i];
    const auto& payment = locked.payments.at(callback.payment_no);
    const auto order = locked.orders.find(payment.order_no);
    // The foreign key guarantees the order; the lock returns every row it names.
    assert(order != locked.orders.end());
    auto plan =
        domain::plan_callback(callback, payment, order->second, logs.at(callback.callback_id));
    add_plan_writes(callback, i, plan, locked, payment, order->second, out);
    out.plans.emplace_back(i, std::move(plan));
  }
  assert(out.failed_moves.to.empty() ||
         std::all_of(out.failed_moves.to.begin(), out.failed_moves.to.end(),
                     [](std::int64_t to) { return to == code(domain::PaymentStatus::failed); }));
  return out;
}

// The moves into SUCCESS and PAID in one statement, into FAILED in another, then the
// discrepancies.
void write_moves(pqxx::work& tx, const PlannedBatch& planned) {
  run_succeeded_and_paid(tx, planned.succeeded, planned.orders_paid);
  run_moves(tx, sql::kBatchMovePaymentsFailed, planned.failed_moves);
  if (!planned.disc_payments.empty()) {
    (void)tx.exec_prepared(std::string(sql::kBatchInsertDiscrepancies),
                           to_pg_array(planned.disc_payments), to_pg_array(planned.disc_orders),
                           to_pg_array(planned.disc_kinds), to_pg_array(planned.disc_details));
  }
}

// The answer to a callback whose transaction, alone, failed with a non-retryable error: a unique
// violation is its conflict (409), anything else 503.
CallbackOutcome failed_alone(const domain::VerifiedCallback& callback, PgErrorClass kind) {
  if (kind == PgErrorClass::unique_violation) {
    logger().error("event=callback_conflict payment_no={} callback_id={} reason=unique_violation",
                   quoted_value(callback.payment_no), quoted_value(callback.callback_id));
    return {CallbackResult::conflict, "channel trade number is bound to another payment"};
  }
  logger().error("event=callback_unavailable payment_no={} callback_id={} error_class=permanent",
                 quoted_value(callback.payment_no), quoted_value(callback.callback_id));
  return {CallbackResult::unavailable, "storage unavailable"};
}

}  // namespace

CallbackExecutor::CallbackExecutor(PgSession& pg, RedisClient& redis, Failpoints* failpoints,
                                   StatusOf status_of)
    : pg_(pg), seats_(redis), failpoints_(failpoints), status_of_(status_of) {
  assert(status_of_ != nullptr && "the log records each callback's status: pass the table");
}

std::vector<std::size_t> CallbackExecutor::run_once(
    const std::vector<domain::VerifiedCallback>& batch, const std::vector<std::size_t>& live,
    std::vector<CallbackOutcome>& outcomes) {
  pqxx::work tx(pg_.connection());
  (void)pg_.refresh_plans_if_due(tx);
  Locked locked;
  {
    std::vector<std::string> payment_nos;
    for (const auto i : live) {
      payment_nos.push_back(batch[i].payment_no);
    }
    lock_payments_and_orders(tx, payment_nos, locked);
  }
  const auto accepted = screen_batch(batch, live, locked, outcomes);
  if (accepted.empty()) {
    return {};
  }
  const auto logs = upsert_logs(tx, batch, accepted, locked, status_of_);
  auto planned = plan_batch(batch, accepted, locked, logs);
  write_moves(tx, planned);
  // Step 4: mark_sold inside the transaction; a failure rolls everything back (tx's destructor).
  auto sale_failures = sell(seats_, planned.sales, failpoints_);
  if (!sale_failures.empty()) {
    return sale_failures;
  }
  if (failpoints_ != nullptr && failpoints_->hit(FailpointId::pg_commit)) {
    for (const auto& [i, plan] : planned.plans) {
      outcomes[i] = {CallbackResult::unavailable, "failpoint pg_commit"};
    }
    return {};
  }
  tx.commit();
  if (failpoints_ != nullptr && failpoints_->hit(FailpointId::pg_commit_unknown)) {
    // Committed, but the answer is lost with the connection: the outcome is unknown here, so no
    // callback of the batch may be ACKed (process() drops the connection and answers 503).
    throw pqxx::in_doubt_error("failpoint pg_commit_unknown");
  }
  // Step 5: answers only after the commit.
  for (auto& [i, plan] : planned.plans) {
    log_outcome(batch[i], plan, locked.payments.at(batch[i].payment_no));
    outcomes[i] = std::move(plan.outcome);
  }
  return {};
}

bool CallbackExecutor::warm_up() {
  try {
    pqxx::work tx(pg_.connection());
    const std::string none = "{}";
    // Keys no row has, as many as a typical batch: planning them reads the columns' statistics,
    // and after kWarmUpRounds executions PostgreSQL keeps the generic plan, so the first batches
    // pay neither the custom plans nor the switch to the generic one.
    std::vector<std::string> keys;
    std::vector<std::int64_t> statuses;
    std::vector<std::string> rows;
    for (std::size_t i = 0; i < kWarmUpKeys; ++i) {
      keys.push_back("seatflow-warm-up-" + std::to_string(i));
      statuses.push_back(code(domain::PaymentStatus::pending));
      rows.emplace_back("(0,0)");
    }
    const auto k = to_pg_array(keys);
    const auto st = to_pg_array(statuses);
    const auto r = to_pg_array(rows);
    for (int round = 0; round < kWarmUpRounds; ++round) {
      (void)tx.exec_prepared(std::string(sql::kBatchLockPaymentsAndOrders), k);
      (void)tx.exec_prepared(std::string(sql::kBatchMoveSucceededAndPaid), k, st, st, k, r, k, st,
                             st, k, r);
    }
    (void)tx.exec_prepared(std::string(sql::kBatchUpsertLogs), none, none, none, none, none, none,
                           none, none, none);
    // A message of no event, in a transaction that rolls back: never decoded.
    (void)tx.exec("SELECT seatflow_emit_events('[]')");
    return true;  // tx's destructor rolls back
  } catch (const std::exception& error) {
    (void)pg_.reset_if_broken(error);
    logger().debug("event=pg_warm_up_skipped error_class={}",
                   classify(error) == PgErrorClass::retryable ? "retryable" : "permanent");
    return false;
  }
}

std::vector<CallbackOutcome> CallbackExecutor::process(
    const std::vector<domain::VerifiedCallback>& batch, const std::vector<Deadline>& deadlines) {
  assert(deadlines.empty() || deadlines.size() == batch.size());
  const auto deadline_of = [&](std::size_t i) {
    return deadlines.empty() ? kNoDeadline : deadlines[i];
  };
  std::vector<CallbackOutcome> outcomes(batch.size());
  std::vector<std::size_t> live(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    live[i] = i;
  }
  bool reconnected = false;
  for (int run = 0; run <= sale_reruns_max;) {
    // A callback past its deadline was already answered 503 upstream; running it only adds load.
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(live, [&](std::size_t i) {
      if (now <= deadline_of(i)) {
        return false;
      }
      outcomes[i] = {CallbackResult::unavailable, "deadline passed"};
      return true;
    });
    if (live.empty()) {
      return outcomes;
    }
    try {
      const auto unsold = run_once(batch, live, outcomes);
      if (unsold.empty()) {
        return outcomes;
      }
      for (const auto i : unsold) {
        outcomes[i] = {CallbackResult::mark_sold_failed, "seats could not be marked sold"};
        logger().warn("event=mark_sold_failed payment_no={}", quoted_value(batch[i].payment_no));
        std::erase(live, i);
      }
      ++run;
      continue;
    } catch (const std::exception& error) {
      const auto kind = classify(error);
      const bool broken = pg_.reset_if_broken(error);
      // A commit whose outcome is unknown is not run again here: a rerun would count the engine's
      // own retry as a gateway duplicate. It answers 503 and the gateway's resend finds out.
      const bool in_doubt = dynamic_cast<const pqxx::in_doubt_error*>(&error) != nullptr;
      if (broken && !reconnected && !in_doubt) {
        reconnected = true;  // a connection that broke while idle (a server restart): once more
        continue;
      }
      if (kind == PgErrorClass::retryable) {
        logger().warn("event=callback_unavailable callbacks={} error_class=retryable", live.size());
        for (const auto i : live) {
          outcomes[i] = {CallbackResult::unavailable, "storage unavailable"};
        }
        return outcomes;
      }
      if (live.size() == 1) {
        outcomes[live.front()] = failed_alone(batch[live.front()], kind);
        return outcomes;
      }
      break;  // a per-row error: one callback per transaction below
    }
  }
  for (const auto i : live) {
    outcomes[i] = process({batch[i]}, {deadline_of(i)}).front();
  }
  return outcomes;
}

}  // namespace seatflow::persistence

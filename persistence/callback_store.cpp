// One verified callback, one transaction: lookup, log-or-count, decide, CAS, mark_sold, commit.
#include <cassert>

#include "persistence/callback_store.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "domain/state_machine.hpp"
#include "persistence/sql.hpp"

namespace seatflow::persistence {
namespace {

using domain::CallbackAction;
using domain::CallbackOutcome;
using domain::CallbackResult;

// A broken connection is retried once on a fresh connection; anything else is answered at once.
constexpr int kMaxAttempts = 2;

struct PaymentRow {
  domain::PaymentStatus payment_status;
  std::string channel;
  std::int64_t amount_cents;
  std::string order_no;
  domain::OrderStatus order_status;
  std::string show_id;
  std::vector<std::string> seat_ids;
  std::string channel_trade_no;  // "" until a success recorded one
};

std::optional<PaymentRow> load_payment(pqxx::work& tx, const std::string& payment_no) {
  const auto payments = tx.exec_prepared(std::string(sql::kLockPayment), payment_no);
  if (payments.empty()) {
    return std::nullopt;
  }
  const auto& p = payments[0];
  const auto order_no = p[3].as<std::string>();
  const auto orders = tx.exec_prepared(std::string(sql::kLockOrder), order_no);
  // The foreign key guarantees the order exists; the CHECK constraints bound both statuses.
  assert(!orders.empty());
  const auto& o = orders[0];
  const auto payment_status = domain::payment_status_from_int(p[0].as<int>());
  const auto order_status = domain::order_status_from_int(o[0].as<int>());
  assert(payment_status && order_status);
  PaymentRow out{*payment_status,
                 p[1].as<std::string>(),
                 p[2].as<std::int64_t>(),
                 order_no,
                 *order_status,
                 o[1].as<std::string>(),
                 {},
                 p[4].as<std::string>()};
  out.seat_ids = nlohmann::json::parse(o[2].as<std::string>()).get<std::vector<std::string>>();
  return out;
}

int status_code(domain::CallbackKind kind) {
  switch (kind) {
    case domain::CallbackKind::success:
      return 1;
    case domain::CallbackKind::failure:
      return 2;
    case domain::CallbackKind::other:
      return 0;
  }
  return 0;
}

}  // namespace

bool same_trade(const std::string& callback_trade_no, const std::string& payment_trade_no) {
  return !callback_trade_no.empty() && callback_trade_no == payment_trade_no;
}

CallbackStore::CallbackStore(PgSession& pg, SeatStore& seats, Failpoints* failpoints)
    : pg_(pg), seats_(seats), failpoints_(failpoints) {}

CallbackOutcome CallbackStore::process(const domain::VerifiedCallback& callback) {
  for (int attempt = 1;; ++attempt) {
    try {
      return run_transaction(callback);
    } catch (const std::exception& error) {
      const auto kind = classify(error);
      if (kind == PgErrorClass::unique_violation) {
        spdlog::error(
            "event=callback_conflict payment_no={} callback_id={} reason=unique_violation",
            callback.payment_no, callback.callback_id);
        return {CallbackResult::conflict, "channel trade number is bound to another payment"};
      }
      const bool broken = pg_.reset_if_broken(error);
      if (broken && attempt < kMaxAttempts) {
        continue;
      }
      spdlog::warn("event=callback_unavailable payment_no={} callback_id={} error_class={}",
                   callback.payment_no, callback.callback_id,
                   kind == PgErrorClass::retryable ? "retryable" : "permanent");
      return {CallbackResult::unavailable, "storage unavailable"};
    }
  }
}

CallbackOutcome CallbackStore::run_transaction(const domain::VerifiedCallback& callback) {
  pqxx::work tx(pg_.connection());
  const auto payment = load_payment(tx, callback.payment_no);
  if (!payment) {
    return {CallbackResult::unknown_payment, "unknown payment"};
  }
  if (payment->channel != domain::to_string(callback.channel)) {
    return {CallbackResult::rejected_param, "channel does not match the payment"};
  }
  if (callback.amount_cents && *callback.amount_cents != payment->amount_cents) {
    spdlog::error("event=amount_mismatch payment_no={} expected_cents={} callback_cents={}",
                  callback.payment_no, payment->amount_cents, *callback.amount_cents);
    return {CallbackResult::rejected_param, "amount does not match the payment"};
  }

  const auto log =
      tx.exec_prepared(std::string(sql::kInsertCallbackLog), callback.callback_id, payment->channel,
                       callback.payment_no, status_code(callback.kind), callback.payload_sha256);
  if (log.empty()) {
    spdlog::error("event=callback_conflict payment_no={} callback_id={} reason=digest_differs",
                  callback.payment_no, callback.callback_id);
    return {CallbackResult::conflict, "callback id reused with different content"};
  }
  const bool first_delivery = log[0][0].as<bool>();

  const auto decision =
      domain::decide_callback(payment->payment_status, payment->order_status, callback.kind);
  CallbackResult result = CallbackResult::ignored;
  bool order_paid = payment->order_status == domain::OrderStatus::paid;
  switch (decision.action) {
    case CallbackAction::discrepancy: {
      // A copy of a callback already logged is the same payment event, not new money: the gateway
      // replaying its original success after a refund must not record a discrepancy. Neither is a
      // success for the very trade that paid this payment, whose log row retention removed.
      if (!first_delivery || same_trade(callback.channel_trade_no, payment->channel_trade_no)) {
        break;
      }
      nlohmann::json detail = {{"callback_id", callback.callback_id},
                               {"payment_status", static_cast<int>(payment->payment_status)},
                               {"order_status", static_cast<int>(payment->order_status)}};
      (void)tx.exec_prepared(std::string(sql::kInsertDiscrepancy), callback.payment_no,
                             payment->order_no, std::string(decision.discrepancy_kind),
                             detail.dump());
      spdlog::warn("event=payment_discrepancy kind={} payment_no={} order_no={}",
                   decision.discrepancy_kind, callback.payment_no, payment->order_no);
      result = CallbackResult::discrepancy;
      break;
    }
    case CallbackAction::apply_failure: {
      const auto moved = tx.exec_prepared(std::string(sql::kPaymentCasFailed), callback.payment_no);
      result = moved.size() == 1 ? CallbackResult::applied : CallbackResult::ignored;
      break;
    }
    case CallbackAction::apply_success: {
      const auto moved =
          tx.exec_prepared(std::string(sql::kPaymentCasSuccess), callback.payment_no,
                           static_cast<int>(*decision.expected_payment), callback.channel_trade_no);
      if (moved.size() != 1) {
        // The row is locked FOR UPDATE, so only a concurrent writer outside that lock gets here.
        return {CallbackResult::unavailable, "payment changed concurrently"};
      }
      if (payment->order_status == domain::OrderStatus::pending) {
        const auto order = tx.exec_prepared(std::string(sql::kOrderCasPaid), payment->order_no);
        order_paid = order.size() == 1;
      }
      result = CallbackResult::applied;
      break;
    }
    case CallbackAction::heal_paid:
    case CallbackAction::ignore:
      break;
  }

  const bool sell = order_paid && (decision.action == CallbackAction::apply_success ||
                                   decision.action == CallbackAction::heal_paid);
  if (sell) {
    // mark_sold runs inside the transaction: when it fails, nothing of this callback survives.
    SeatResult sold;
    if (failpoints_ != nullptr && failpoints_->hit(FailpointId::mark_sold)) {
      sold.error = "failpoint mark_sold";
    } else {
      sold = seats_.mark_sold(payment->show_id, payment->order_no, payment->seat_ids);
    }
    if (sold.outcome != SeatOutcome::ok) {
      spdlog::warn("event=mark_sold_failed payment_no={} order_no={} seat_id={} reason={}",
                   callback.payment_no, payment->order_no, sold.seat_id,
                   sold.outcome == SeatOutcome::taken ? "seat_not_held" : "redis_unavailable");
      return {CallbackResult::mark_sold_failed, "seats could not be marked sold"};
    }
  }

  if (failpoints_ != nullptr && failpoints_->hit(FailpointId::pg_commit)) {
    return {CallbackResult::unavailable, "failpoint pg_commit"};
  }
  tx.commit();
  if (!first_delivery) {
    return {CallbackResult::duplicate, {}};
  }
  return {result, {}};
}

}  // namespace seatflow::persistence

// Group commit of callbacks: set-based statements over unnest() arrays, one transaction per batch,
// pipelined mark_sold; per-callback semantics identical to CallbackStore.
#include "persistence/batch_store.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <unordered_map>

#include "domain/state_machine.hpp"
#include "persistence/seat_scripts.hpp"
#include "persistence/sql.hpp"

namespace seatflow::persistence {
namespace {

using domain::CallbackAction;
using domain::CallbackOutcome;
using domain::CallbackResult;

constexpr int kMaxMarkSoldReruns = 3;

struct PaymentInfo {
  domain::PaymentStatus status;
  std::string channel;
  std::int64_t amount_cents;
  std::string order_no;
  std::string channel_trade_no;
};

struct OrderInfo {
  domain::OrderStatus status;
  std::string show_id;
  std::vector<std::string> seats;
};

struct Sale {
  std::size_t index;  // the callback it belongs to; SIZE_MAX for heals without a callback
  std::string order_no;
  std::string show_id;
  std::vector<std::string> seats;
};

int status_code(domain::CallbackKind kind) {
  return kind == domain::CallbackKind::success ? 1 : kind == domain::CallbackKind::failure ? 2 : 0;
}

std::vector<std::string> parse_seats(const pqxx::field& field) {
  return nlohmann::json::parse(field.as<std::string>()).get<std::vector<std::string>>();
}

// mark_sold for every sale in one pipeline; returns the sales that failed.
std::vector<std::size_t> sell(RedisClient& redis, const std::string& sha,
                              const std::vector<Sale>& sales, Failpoints* failpoints) {
  std::vector<std::size_t> failed;
  std::vector<std::vector<std::string>> commands;
  std::vector<std::size_t> sent;
  for (std::size_t i = 0; i < sales.size(); ++i) {
    if (failpoints != nullptr && failpoints->hit(FailpointId::mark_sold)) {
      failed.push_back(i);
      continue;
    }
    std::vector<std::string> cmd = {"EVALSHA", sha, "1", seat_key(sales[i].show_id),
                                    sales[i].order_no};
    cmd.insert(cmd.end(), sales[i].seats.begin(), sales[i].seats.end());
    commands.push_back(std::move(cmd));
    sent.push_back(i);
  }
  if (commands.empty()) {
    return failed;
  }
  const auto replies = redis.pipeline_scripts(commands, kMarkSoldLua);
  for (std::size_t k = 0; k < replies.size(); ++k) {
    const auto& reply = replies[k];
    const bool ok = reply.ok && !reply.elements.empty() && reply.elements[0].integer == 1;
    if (!ok) {
      failed.push_back(sent[k]);
    }
  }
  return failed;
}

}  // namespace

BatchCallbackStore::BatchCallbackStore(PgSession& pg, RedisClient& redis, CallbackStore& single,
                                       Failpoints* failpoints)
    : pg_(pg),
      redis_(redis),
      single_(single),
      failpoints_(failpoints),
      mark_sold_sha_(script_sha1(kMarkSoldLua)) {}

std::vector<CallbackOutcome> BatchCallbackStore::one_by_one(
    const std::vector<domain::VerifiedCallback>& batch) {
  std::vector<CallbackOutcome> outcomes;
  outcomes.reserve(batch.size());
  for (const auto& callback : batch) {
    outcomes.push_back(single_.process(callback));
  }
  return outcomes;
}

std::vector<CallbackOutcome> BatchCallbackStore::process(
    const std::vector<domain::VerifiedCallback>& batch) {
  if (batch.size() == 1) {
    return {single_.process(batch.front())};
  }
  std::vector<CallbackOutcome> outcomes(batch.size());
  std::vector<bool> excluded(batch.size(), false);
  for (int attempt = 0; attempt <= kMaxMarkSoldReruns; ++attempt) {
    std::vector<std::size_t> failed;
    try {
      if (run_once(batch, excluded, outcomes, failed)) {
        return outcomes;
      }
    } catch (const std::exception& error) {
      pg_.reset_if_broken(error);
      spdlog::debug("event=batch_fallback size={} reason=statement_error", batch.size());
      break;
    }
    // Only the callbacks whose seats could not be sold are answered 503; the rest run again.
    for (const auto index : failed) {
      excluded[index] = true;
      outcomes[index] = {CallbackResult::mark_sold_failed, "seats could not be marked sold"};
      spdlog::warn("event=mark_sold_failed payment_no={}", batch[index].payment_no);
    }
  }
  std::vector<domain::VerifiedCallback> rest;
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!excluded[i]) {
      rest.push_back(batch[i]);
      positions.push_back(i);
    }
  }
  const auto single = one_by_one(rest);
  for (std::size_t k = 0; k < positions.size(); ++k) {
    outcomes[positions[k]] = single[k];
  }
  return outcomes;
}

bool BatchCallbackStore::run_once(const std::vector<domain::VerifiedCallback>& batch,
                                  std::vector<bool>& excluded,
                                  std::vector<CallbackOutcome>& outcomes,
                                  std::vector<std::size_t>& failed) {
  pqxx::work tx(pg_.connection());
  std::vector<std::size_t> live;
  std::vector<std::string> payment_nos;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!excluded[i]) {
      live.push_back(i);
      payment_nos.push_back(batch[i].payment_no);
    }
  }
  std::unordered_map<std::string, PaymentInfo> payments;
  for (const auto& row :
       tx.exec_prepared(std::string(sql::kBatchLockPayments), to_pg_array(payment_nos))) {
    payments.emplace(
        row[0].as<std::string>(),
        PaymentInfo{*domain::payment_status_from_int(row[1].as<int>()), row[2].as<std::string>(),
                    row[3].as<std::int64_t>(), row[4].as<std::string>(), row[5].as<std::string>()});
  }
  // Step 0 checks: rejected callbacks leave no log row.
  std::vector<std::size_t> accepted;
  std::vector<std::string> order_nos;
  for (const auto i : live) {
    const auto& cb = batch[i];
    const auto it = payments.find(cb.payment_no);
    if (it == payments.end()) {
      outcomes[i] = {CallbackResult::unknown_payment, "unknown payment"};
    } else if (it->second.channel != domain::to_string(cb.channel)) {
      outcomes[i] = {CallbackResult::rejected_param, "channel does not match the payment"};
    } else if (cb.amount_cents && *cb.amount_cents != it->second.amount_cents) {
      spdlog::error("event=amount_mismatch payment_no={} expected_cents={} callback_cents={}",
                    cb.payment_no, it->second.amount_cents, *cb.amount_cents);
      outcomes[i] = {CallbackResult::rejected_param, "amount does not match the payment"};
    } else {
      accepted.push_back(i);
      order_nos.push_back(it->second.order_no);
    }
  }
  std::unordered_map<std::string, OrderInfo> orders;
  if (!order_nos.empty()) {
    for (const auto& row :
         tx.exec_prepared(std::string(sql::kBatchLockOrders), to_pg_array(order_nos))) {
      orders.emplace(row[0].as<std::string>(),
                     OrderInfo{*domain::order_status_from_int(row[1].as<int>()),
                               row[2].as<std::string>(), parse_seats(row[3])});
    }
  }

  // Step 1: log rows, or duplicate counts; a callback id whose digest differs is a conflict.
  std::unordered_map<std::string, bool> first_delivery;
  if (!accepted.empty()) {
    std::vector<std::string> ids, channels, pns, digests;
    std::vector<std::int64_t> statuses;
    for (const auto i : accepted) {
      ids.push_back(batch[i].callback_id);
      channels.push_back(std::string(domain::to_string(batch[i].channel)));
      pns.push_back(batch[i].payment_no);
      statuses.push_back(status_code(batch[i].kind));
      digests.push_back(batch[i].payload_sha256);
    }
    for (const auto& row : tx.exec_prepared(std::string(sql::kBatchUpsertLogs), to_pg_array(ids),
                                            to_pg_array(channels), to_pg_array(pns),
                                            to_pg_array(statuses), to_pg_array(digests))) {
      first_delivery.emplace(row[0].as<std::string>(), row[1].as<bool>());
    }
  }

  // Steps 2-3: decide each callback, then one statement per kind of move.
  std::vector<std::string> success_pns, success_trades, failed_pns, paid_orders;
  std::vector<std::int64_t> success_expected;
  std::vector<std::string> disc_pns, disc_orders, disc_kinds, disc_details;
  std::vector<std::pair<std::size_t, CallbackAction>> decided;
  for (const auto i : accepted) {
    const auto& cb = batch[i];
    if (first_delivery.find(cb.callback_id) == first_delivery.end()) {
      spdlog::error("event=callback_conflict payment_no={} callback_id={} reason=digest_differs",
                    cb.payment_no, cb.callback_id);
      outcomes[i] = {CallbackResult::conflict, "callback id reused with different content"};
      continue;
    }
    const auto& payment = payments.at(cb.payment_no);
    const auto& order = orders.at(payment.order_no);
    const auto decision = domain::decide_callback(payment.status, order.status, cb.kind);
    decided.emplace_back(i, decision.action);
    switch (decision.action) {
      case CallbackAction::apply_success:
        success_pns.push_back(cb.payment_no);
        success_expected.push_back(static_cast<int>(*decision.expected_payment));
        success_trades.push_back(cb.channel_trade_no);
        if (order.status == domain::OrderStatus::pending) {
          paid_orders.push_back(payment.order_no);
        }
        break;
      case CallbackAction::apply_failure:
        failed_pns.push_back(cb.payment_no);
        break;
      case CallbackAction::discrepancy:
        if (!first_delivery.at(cb.callback_id)) {
          break;  // a replay of a logged callback is not new money (see CallbackStore)
        }
        if (same_trade(cb.channel_trade_no, payment.channel_trade_no)) {
          decided.back().second = CallbackAction::ignore;  // a copy of the paying trade
          break;
        }
        disc_pns.push_back(cb.payment_no);
        disc_orders.push_back(payment.order_no);
        disc_kinds.push_back(std::string(decision.discrepancy_kind));
        disc_details.push_back(nlohmann::json{{"callback_id", cb.callback_id},
                                              {"payment_status", static_cast<int>(payment.status)},
                                              {"order_status", static_cast<int>(order.status)}}
                                   .dump());
        spdlog::warn("event=payment_discrepancy kind={} payment_no={} order_no={}",
                     decision.discrepancy_kind, cb.payment_no, payment.order_no);
        break;
      case CallbackAction::heal_paid:
      case CallbackAction::ignore:
        break;
    }
  }
  std::set<std::string> moved_success, moved_failed, orders_now_paid;
  if (!success_pns.empty()) {
    for (const auto& row :
         tx.exec_prepared(std::string(sql::kBatchCasSuccess), to_pg_array(success_pns),
                          to_pg_array(success_expected), to_pg_array(success_trades))) {
      moved_success.insert(row[0].as<std::string>());
    }
    // Every row is locked, so every CAS must have matched; anything else is a programmer error
    // and falls back to the one-by-one path.
    if (moved_success.size() != success_pns.size()) {
      throw std::logic_error("batch success CAS missed a locked row");
    }
  }
  if (!failed_pns.empty()) {
    for (const auto& row :
         tx.exec_prepared(std::string(sql::kBatchCasFailed), to_pg_array(failed_pns))) {
      moved_failed.insert(row[0].as<std::string>());
    }
  }
  if (!paid_orders.empty()) {
    for (const auto& row :
         tx.exec_prepared(std::string(sql::kBatchCasOrdersPaid), to_pg_array(paid_orders))) {
      orders_now_paid.insert(row[0].as<std::string>());
    }
  }
  if (!disc_pns.empty()) {
    (void)tx.exec_prepared(std::string(sql::kBatchInsertDiscrepancies), to_pg_array(disc_pns),
                           to_pg_array(disc_orders), to_pg_array(disc_kinds),
                           to_pg_array(disc_details));
  }

  // mark_sold inside the transaction, for every order that is paid now or was before.
  std::vector<Sale> sales;
  for (const auto& [i, action] : decided) {
    if (action != CallbackAction::apply_success && action != CallbackAction::heal_paid) {
      continue;
    }
    const auto& payment = payments.at(batch[i].payment_no);
    const auto& order = orders.at(payment.order_no);
    if (order.status == domain::OrderStatus::paid || orders_now_paid.count(payment.order_no) > 0) {
      sales.push_back({i, payment.order_no, order.show_id, order.seats});
    }
  }
  for (const auto k : sell(redis_, mark_sold_sha_, sales, failpoints_)) {
    failed.push_back(sales[k].index);
  }
  if (!failed.empty()) {
    return false;  // rolled back by tx's destructor; the caller re-runs without them
  }
  if (failpoints_ != nullptr && failpoints_->hit(FailpointId::pg_commit)) {
    for (const auto i : live) {
      outcomes[i] = {CallbackResult::unavailable, "failpoint pg_commit"};
    }
    return true;
  }
  tx.commit();
  for (const auto& [i, action] : decided) {
    const auto& pn = batch[i].payment_no;
    CallbackResult result = CallbackResult::ignored;
    if (!first_delivery.at(batch[i].callback_id)) {
      result = CallbackResult::duplicate;
    } else if (action == CallbackAction::discrepancy) {
      result = CallbackResult::discrepancy;
    } else if (moved_success.count(pn) > 0 || moved_failed.count(pn) > 0) {
      result = CallbackResult::applied;
    }
    outcomes[i] = {result, {}};
  }
  return true;
}

bool BatchCallbackStore::flush_duplicates(const std::vector<DuplicateCount>& counts,
                                          const std::vector<std::string>& heal_payments) {
  // A connection broken since the last use (a database restart) is retried once on a fresh one,
  // as the callback path does: otherwise every persistence actor's stale connection costs one
  // failed flush and one more interval before the counts are written.
  constexpr int kFlushAttempts = 2;
  for (int attempt = 1;; ++attempt) {
    try {
      pqxx::work tx(pg_.connection());
      if (!counts.empty()) {
        std::vector<std::string> ids;
        std::vector<std::int64_t> ns;
        for (const auto& c : counts) {
          ids.push_back(c.callback_id);
          ns.push_back(c.count);
        }
        tx.exec_prepared0(std::string(sql::kBatchAddDuplicates), to_pg_array(ids), to_pg_array(ns));
      }
      std::vector<Sale> sales;
      if (!heal_payments.empty()) {
        for (const auto& row :
             tx.exec_prepared(std::string(sql::kBatchPaidOrdersOf), to_pg_array(heal_payments))) {
          sales.push_back(
              {SIZE_MAX, row[0].as<std::string>(), row[1].as<std::string>(), parse_seats(row[2])});
        }
      }
      if (failpoints_ != nullptr && failpoints_->hit(FailpointId::pg_commit)) {
        spdlog::warn("event=duplicate_flush_failed entries={} reason=failpoint", counts.size());
        return false;
      }
      tx.commit();
      // The heal is best effort: a seat that cannot be sold stays for the reconciler.
      const auto failed = sell(redis_, mark_sold_sha_, sales, nullptr);
      if (!failed.empty()) {
        spdlog::warn("event=self_heal_failed orders={}", failed.size());
      }
      return true;
    } catch (const std::exception& error) {
      // in_doubt_error (the commit's fate unknown) is not a broken_connection: never retried.
      const bool broken = dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr;
      pg_.reset_if_broken(error);
      if (broken && attempt < kFlushAttempts) {
        continue;
      }
      spdlog::warn("event=duplicate_flush_failed entries={}", counts.size());
      return false;
    }
  }
}

}  // namespace seatflow::persistence

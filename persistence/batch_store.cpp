// Group commit through the one SPEC §6 executor, and the duplicate-count flush with its
// self-heal.
#include "persistence/batch_store.hpp"

#include <nlohmann/json.hpp>

#include "domain/types.hpp"
#include "persistence/log.hpp"
#include "persistence/sql.hpp"

namespace seatflow::persistence {
namespace {

// A paid order whose seats a duplicate's self-heal sells again.
struct PaidOrder {
  std::string order_no;
  std::string show_id;
  std::vector<std::string> seats;
};

}  // namespace

BatchCallbackStore::BatchCallbackStore(PgSession& pg, RedisClient& redis, Failpoints* failpoints,
                                       StatusOf status_of)
    : pg_(pg),
      seats_(redis),
      failpoints_(failpoints),
      executor_(pg, redis, failpoints, status_of) {}

std::vector<domain::CallbackOutcome> BatchCallbackStore::process(
    const std::vector<domain::VerifiedCallback>& batch, const std::vector<Deadline>& deadlines) {
  return executor_.process(batch, deadlines);
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
      (void)pg_.refresh_plans_if_due(tx);
      if (!counts.empty()) {
        std::vector<std::string> ids;
        std::vector<std::int64_t> ns;
        for (const auto& c : counts) {
          ids.push_back(c.callback_id);
          ns.push_back(c.count);
        }
        const auto array = to_pg_array(ids);
        tx.exec_prepared(std::string(sql::kBatchLockLogs), array);
        tx.exec_prepared0(std::string(sql::kBatchAddDuplicates), array, to_pg_array(ns));
      }
      std::vector<PaidOrder> paid;
      if (!heal_payments.empty()) {
        for (const auto& row :
             tx.exec_prepared(std::string(sql::kBatchPaidOrdersOf), to_pg_array(heal_payments),
                              static_cast<int>(domain::PaymentStatus::success),
                              static_cast<int>(domain::OrderStatus::paid))) {
          paid.push_back(
              {row[0].as<std::string>(), row[1].as<std::string>(), json_strings(row[2])});
        }
      }
      if (failpoints_ != nullptr && failpoints_->hit(FailpointId::pg_commit)) {
        logger().warn("event=duplicate_flush_failed entries={} reason=failpoint", counts.size());
        return false;
      }
      tx.commit();
      // The heal is best effort: a seat that cannot be sold stays for the reconciler.
      std::vector<SeatSale> sales;
      sales.reserve(paid.size());
      for (const auto& order : paid) {
        sales.push_back({order.show_id, order.order_no, &order.seats});
      }
      const auto failed = seats_.mark_sold_all(sales);
      if (!failed.empty()) {
        logger().warn("event=self_heal_failed orders={}", failed.size());
      }
      return true;
    } catch (const std::exception& error) {
      // in_doubt_error (the commit's fate unknown) is not a broken_connection: never retried.
      const bool broken = dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr;
      pg_.reset_if_broken(error);
      if (broken && attempt < kFlushAttempts) {
        continue;
      }
      logger().warn("event=duplicate_flush_failed entries={}", counts.size());
      return false;
    }
  }
}

}  // namespace seatflow::persistence

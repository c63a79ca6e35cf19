// Group commit through the one SPEC §6 executor, and the duplicate-count flush with its
// self-heal.
#include "persistence/stores/batch_store.hpp"

#include <nlohmann/json.hpp>

#include <map>

#include "domain/types.hpp"
#include "persistence/drivers/log.hpp"
#include "persistence/stores/sql.hpp"

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

namespace {

// Earlier flushes whose commit was in doubt, asked of PostgreSQL: an aborted one's counts are
// written again (into `writes`), one still in progress stays in doubt, a committed one is done.
void settle_doubts(pqxx::work& tx, const std::vector<DoubtfulFlush>& doubtful,
                   std::vector<DuplicateCount>& writes,
                   std::vector<DoubtfulFlush>& still_in_doubt) {
  for (const auto& doubt : doubtful) {
    const auto row = tx.exec_params1("SELECT pg_xact_status($1::xid8)", doubt.xid);
    const std::string status = row[0].is_null() ? "" : row[0].as<std::string>();
    if (status == "aborted") {
      writes.insert(writes.end(), doubt.counts.begin(), doubt.counts.end());
    } else if (status == "in progress") {
      still_in_doubt.push_back(doubt);
    } else if (status != "committed") {
      // Too old for the commit log: rather a count short than one counted twice.
      logger().warn("event=duplicate_flush_doubt_dropped xid={} entries={}", doubt.xid,
                    doubt.counts.size());
    }
  }
}

// Adds the counts to their log rows; the transaction's id, which a flush in doubt is asked by.
std::string add_duplicates(pqxx::work& tx, const std::vector<DuplicateCount>& writes) {
  // One entry per callback id (an aborted flush's counts and this one's may share ids, and an
  // UPDATE … FROM applies one matching entry per row).
  std::map<std::string, std::int64_t> per_id;
  for (const auto& c : writes) {
    per_id[c.callback_id] += c.count;
  }
  std::vector<std::string> ids;
  std::vector<std::int64_t> ns;
  for (const auto& [id, n] : per_id) {
    ids.push_back(id);
    ns.push_back(n);
  }
  const auto array = to_pg_array(ids);
  tx.exec_prepared(std::string(sql::kBatchLockLogs), array);
  tx.exec_prepared0(std::string(sql::kBatchAddDuplicates), array, to_pg_array(ns));
  return tx.exec1("SELECT pg_current_xact_id()::text")[0].as<std::string>();
}

// The paid orders of the payments to heal, with their seats.
std::vector<PaidOrder> paid_orders_of(pqxx::work& tx, const std::vector<std::string>& payments) {
  std::vector<PaidOrder> paid;
  for (const auto& row :
       tx.exec_prepared(std::string(sql::kBatchPaidOrdersOf), to_pg_array(payments),
                        static_cast<int>(domain::PaymentStatus::success),
                        static_cast<int>(domain::OrderStatus::paid))) {
    paid.push_back({row[0].as<std::string>(), row[1].as<std::string>(), json_strings(row[2])});
  }
  return paid;
}

}  // namespace

FlushResult BatchCallbackStore::flush_duplicates(const std::vector<DuplicateCount>& counts,
                                                 const std::vector<std::string>& heal_payments,
                                                 const std::vector<DoubtfulFlush>& doubtful) {
  // A connection broken since the last use (a database restart) is retried once on a fresh one,
  // as the callback path does: otherwise every persistence actor's stale connection costs one
  // failed flush and one more interval before the counts are written.
  constexpr int kFlushAttempts = 2;
  for (int attempt = 1;; ++attempt) {
    std::vector<DuplicateCount> writes;
    std::vector<DoubtfulFlush> still_in_doubt;
    std::string xid;
    std::vector<PaidOrder> paid;
    try {
      pqxx::work tx(pg_.connection());
      (void)pg_.refresh_plans_if_due(tx);
      settle_doubts(tx, doubtful, writes, still_in_doubt);
      writes.insert(writes.end(), counts.begin(), counts.end());
      if (!writes.empty()) {
        xid = add_duplicates(tx, writes);
      }
      if (!heal_payments.empty()) {
        paid = paid_orders_of(tx, heal_payments);
      }
      if (failpoints_ != nullptr && failpoints_->hit(FailpointId::pg_commit)) {
        logger().warn("event=duplicate_flush_failed entries={} reason=failpoint", counts.size());
        return {FlushOutcome::failed, doubtful};
      }
      try {
        tx.commit();
        if (failpoints_ != nullptr && failpoints_->hit(FailpointId::flush_commit_unknown)) {
          throw pqxx::in_doubt_error("failpoint flush_commit_unknown");
        }
      } catch (const std::exception& error) {
        // The COMMIT went out; whether it arrived is unknown (its bytes may still reach the server
        // after the connection was cut). The next flush asks PostgreSQL.
        pg_.reset_if_broken(error);
        if (!xid.empty()) {
          still_in_doubt.push_back({xid, std::move(writes)});
        }
        logger().warn("event=duplicate_flush_in_doubt xid={} entries={}", xid, counts.size());
        return {xid.empty() ? FlushOutcome::failed : FlushOutcome::in_doubt,
                std::move(still_in_doubt)};
      }
    } catch (const std::exception& error) {
      // Before the commit: nothing was written, and the doubts stay as they were.
      const bool broken = dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr;
      pg_.reset_if_broken(error);
      if (broken && attempt < kFlushAttempts) {
        continue;
      }
      logger().warn("event=duplicate_flush_failed entries={}", counts.size());
      return {FlushOutcome::failed, doubtful};
    }
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
    return {FlushOutcome::committed, std::move(still_in_doubt)};
  }
}

}  // namespace seatflow::persistence

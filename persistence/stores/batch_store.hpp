// Group commit: many payments' callbacks in one transaction through the one SPEC §6 executor, and
// batched duplicate counts with the self-heal mark_sold.
#pragma once

#include <string>
#include <vector>

#include "domain/outcome.hpp"
#include "domain/types.hpp"
#include "persistence/stores/callback_executor.hpp"
#include "persistence/stores/duplicate_flush.hpp"
#include "persistence/stores/seat_scripts.hpp"

namespace seatflow::persistence {

class BatchCallbackStore {
 public:
  BatchCallbackStore(PgSession& pg, RedisClient& redis, Failpoints* failpoints, StatusOf status_of);

  // One outcome per callback, in order: the executor's batch (see CallbackExecutor::process).
  [[nodiscard]] std::vector<domain::CallbackOutcome> process(
      const std::vector<domain::VerifiedCallback>& batch,
      const std::vector<Deadline>& deadlines = {});

  // CallbackExecutor::warm_up: the first batch's catalog loads and plans, paid ahead of it.
  bool warm_up() { return executor_.warm_up(); }

  // Settles `doubtful` first (pg_xact_status: a committed flush's counts are already in the rows,
  // an aborted one's are added again now, a running one stays in doubt), then adds the counts to
  // their log rows and re-runs mark_sold for the paid orders among `heal_payments`, in one
  // transaction. failed when the store is unavailable (retry later; `doubtful` comes back as
  // given).
  [[nodiscard]] FlushResult flush_duplicates(const std::vector<DuplicateCount>& counts,
                                             const std::vector<std::string>& heal_payments,
                                             const std::vector<DoubtfulFlush>& doubtful = {});

 private:
  PgSession& pg_;
  SeatStore seats_;
  Failpoints* failpoints_;
  CallbackExecutor executor_;
};

}  // namespace seatflow::persistence

// Group commit: many payments' callbacks in one transaction with set-based statements (SPEC §6 for
// each callback), and batched duplicate counts with the self-heal mark_sold.
#pragma once

#include <string>
#include <vector>

#include "domain/outcome.hpp"
#include "domain/types.hpp"
#include "persistence/callback_store.hpp"

namespace seatflow::persistence {

// Duplicates answered without the database, to be added to their log rows.
struct DuplicateCount {
  std::string callback_id;
  std::string payment_no;
  std::int64_t count = 0;
};

class BatchCallbackStore {
 public:
  BatchCallbackStore(PgSession& pg, RedisClient& redis, CallbackStore& single,
                     Failpoints* failpoints);

  // One outcome per callback, in order. The batch holds at most one callback per payment (the
  // payment actors guarantee it). A mark_sold failure undoes only its own callback: the
  // transaction is rolled back and re-run without it. Any other statement error falls back to
  // one transaction per callback, so one bad callback cannot fail its neighbours.
  [[nodiscard]] std::vector<domain::CallbackOutcome> process(
      const std::vector<domain::VerifiedCallback>& batch);

  // Adds the counts to their log rows and re-runs mark_sold for the paid orders among
  // `heal_payments`, in one transaction; false when the store is unavailable (retry later).
  [[nodiscard]] bool flush_duplicates(const std::vector<DuplicateCount>& counts,
                                      const std::vector<std::string>& heal_payments);

 private:
  struct Attempt;
  // Runs the batch once; fills `failed_sales` with callbacks whose seats could not be sold.
  bool run_once(const std::vector<domain::VerifiedCallback>& batch, std::vector<bool>& excluded,
                std::vector<domain::CallbackOutcome>& outcomes, std::vector<std::size_t>& failed);
  std::vector<domain::CallbackOutcome> one_by_one(
      const std::vector<domain::VerifiedCallback>& batch);

  PgSession& pg_;
  RedisClient& redis_;
  CallbackStore& single_;
  Failpoints* failpoints_;
  std::string mark_sold_sha_;
};

}  // namespace seatflow::persistence

// The one executor of SPEC §6: carries out the domain's per-callback plans for a batch of
// callbacks (a batch of one is a batch) in one transaction, set-based, with mark_sold inside it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "domain/outcome.hpp"
#include "domain/types.hpp"
#include "persistence/drivers/failpoints.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/drivers/redis.hpp"
#include "persistence/stores/seat_scripts.hpp"

namespace seatflow::persistence {

// The status each callback result is answered with, which a first delivery's log row records in
// its commit (SPEC §12). It is the HTTP layer's table (http::callback_status), handed down by
// whoever builds the store: persistence knows no HTTP.
using StatusOf = int (*)(domain::CallbackResult);

using Deadline = std::chrono::steady_clock::time_point;
inline constexpr Deadline kNoDeadline = Deadline::max();

class CallbackExecutor {
 public:
  CallbackExecutor(PgSession& pg, RedisClient& redis, Failpoints* failpoints, StatusOf status_of);

  // One outcome per callback, in order; never throws. The batch holds at most one callback per
  // payment (the payment actors guarantee it); `deadlines` is empty (none) or one per callback.
  // - A mark_sold failure undoes only its own callback: the transaction is rolled back and run
  //   again without it (at most sale_reruns_max times, then one callback per transaction).
  // - A retryable error (lost connection, statement timeout, serialization failure) answers the
  //   whole batch `unavailable` at once (the gateways retry); a connection found broken is
  //   rebuilt and the batch tried once more.
  // - A per-row error (a trade number bound to another payment) runs the batch again one
  //   callback per transaction, so it cannot fail its neighbours.
  // - A callback whose deadline has passed is never run: `unavailable`.
  [[nodiscard]] std::vector<domain::CallbackOutcome> process(
      const std::vector<domain::VerifiedCallback>& batch, const std::vector<Deadline>& deadlines);

  // Connects, then, in a transaction that rolls back, runs the lock and move statements six times
  // on a batch of keys no row has (their columns' statistics are read, and PostgreSQL settles on
  // the generic plans its first batches then reuse; plans made on tables that a bulk load then
  // fills are made again at the session's plan refresh), the log upsert once on empty input (it
  // would insert otherwise) and the event guard once: the server backend loads its catalog entries,
  // plans, and compiles seatflow_emit_events, work that otherwise lands on the first batches.
  // Best effort: false, nothing changed, when a store is unavailable or the event slot is missing
  // (the first batch then pays as before, or answers 503).
  bool warm_up();

  // How many times a batch is run again without the callbacks whose seats could not be sold.
  static constexpr int sale_reruns_max = 3;

 private:
  // One transaction over the callbacks at `live`: fills their outcomes and returns the ones whose
  // seats could not be sold (then nothing was committed). Throws on a statement error.
  std::vector<std::size_t> run_once(const std::vector<domain::VerifiedCallback>& batch,
                                    const std::vector<std::size_t>& live,
                                    std::vector<domain::CallbackOutcome>& outcomes);

  PgSession& pg_;
  SeatStore seats_;
  Failpoints* failpoints_;
  StatusOf status_of_;
};

}  // namespace seatflow::persistence

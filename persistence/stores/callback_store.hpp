// Applies one verified callback (SPEC §6): a batch of one through the one executor.
#pragma once

#include "domain/outcome.hpp"
#include "domain/types.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/stores/callback_executor.hpp"
#include "persistence/stores/seat_scripts.hpp"

namespace seatflow::persistence {

class CallbackStore {
 public:
  CallbackStore(PgSession& pg, SeatStore& seats, Failpoints* failpoints, StatusOf status_of);

  // Never throws: database and Redis errors become `unavailable` or `mark_sold_failed`.
  [[nodiscard]] domain::CallbackOutcome process(const domain::VerifiedCallback& callback,
                                                Deadline deadline = kNoDeadline);

 private:
  CallbackExecutor executor_;
};

}  // namespace seatflow::persistence

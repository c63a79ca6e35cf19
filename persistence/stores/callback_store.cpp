// One verified callback: the executor's batch of one.
#include "persistence/stores/callback_store.hpp"

namespace seatflow::persistence {

CallbackStore::CallbackStore(PgSession& pg, SeatStore& seats, Failpoints* failpoints,
                             StatusOf status_of)
    : executor_(pg, seats.redis(), failpoints, status_of) {}

domain::CallbackOutcome CallbackStore::process(const domain::VerifiedCallback& callback,
                                               Deadline deadline) {
  return executor_.process({callback}, {deadline}).front();
}

}  // namespace seatflow::persistence

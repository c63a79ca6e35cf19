// The refund actor's one message: a discrepancy refund, run with the actor's connection.
#include "actors/refund_actor.hpp"

namespace seatflow::actors {

RefundActor::behavior_type refund_actor(RefundActor::stateful_pointer<RefundActorState> self,
                                        StoreSettings store,
                                        std::shared_ptr<DiscrepancyRefunder> refunder) {
  auto& st = self->state;
  st.pg = open_pg(store);
  st.store = std::make_unique<persistence::RefundStore>(*st.pg);
  st.refunder = std::move(refunder);
  return {
      [self](RefundJob& job) -> RefundRun {
        auto& st = self->state;
        // Store calls are watched one at a time inside run(); the gateway call has the client's
        // own deadlines.
        auto run = st.refunder->run(*st.store, job.discrepancy_id);
        st.refunder->release(job.discrepancy_id);
        return run;
      },
  };
}

}  // namespace seatflow::actors

// The refund actor: a detached owner of one PostgreSQL connection that runs discrepancy refunds
// (POST /api/discrepancies/{id}/refund) one at a time, each with its gateway call's deadlines.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <caf/all.hpp>

#include "actors/discrepancy_refunder.hpp"
#include "actors/persistence_actor.hpp"
#include "persistence/stores/refund_store.hpp"

namespace seatflow::actors {

// A refund request: refund the discrepancy, answer (on the refund actor's thread).
struct RefundJob {
  std::int64_t discrepancy_id = 0;
  std::function<void(const RefundRun& run)> reply;
};

struct RefundActorState {
  static inline const char* name = "seatflow.refund";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RefundStore> store;
  std::shared_ptr<DiscrepancyRefunder> refunder;
};

// Handles RefundJob; the engine has claimed the discrepancy (DiscrepancyRefunder::claim) and the
// actor releases it after the reply.
[[nodiscard]] caf::behavior refund_actor(caf::stateful_actor<RefundActorState>* self,
                                         StoreSettings store,
                                         std::shared_ptr<DiscrepancyRefunder> refunder);

}  // namespace seatflow::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::RefundJob)

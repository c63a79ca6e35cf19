// The refund actor: a detached owner of one PostgreSQL connection that runs discrepancy refunds
// (POST /api/discrepancies/{id}/refund) one at a time, each with its gateway call's deadlines.
#pragma once

#include <cstdint>
#include <memory>

#include <caf/all.hpp>

#include "actors/discrepancy_refunder.hpp"
#include "actors/messages.hpp"
#include "actors/persistence_actor.hpp"
#include "persistence/stores/refund_store.hpp"

namespace seatflow::actors {

struct RefundActorState {
  static inline const char* name = "seatflow.refund";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RefundStore> store;
  std::shared_ptr<DiscrepancyRefunder> refunder;
};

// SEATFLOW_AUTO_REFUND=paid_after_cancel (SPEC §16): every this often, the open paid_after_cancel
// discrepancies that have no refund attempt yet are refunded, at most kAutoRefundBatchMax a time.
struct AutoRefundSettings {
  bool enabled = false;
  std::uint32_t interval_ms = 5'000;  // SEATFLOW_AUTO_REFUND_INTERVAL_MS
};
inline constexpr std::size_t kAutoRefundBatchMax = 20;

// RefundActor: RefundJob, answered with the refund's run; the engine has claimed the discrepancy
// (DiscrepancyRefunder::claim) and the actor releases it before the answer.
[[nodiscard]] RefundActor::behavior_type refund_actor(
    RefundActor::stateful_pointer<RefundActorState> self, StoreSettings store,
    std::shared_ptr<DiscrepancyRefunder> refunder, AutoRefundSettings automatic);

}  // namespace seatflow::actors

// Payment actor: one per paymentNo; serialises that payment's callbacks, one in flight at a time.
#pragma once

#include <deque>
#include <string>

#include <caf/all.hpp>

#include "actors/messages.hpp"

namespace seatflow::actors {

struct PaymentActorLimits {
  std::size_t mailbox_limit = 256;
  std::uint32_t passivate_idle_ms = 30'000;
  std::uint32_t persist_timeout_ms = 10'000;
};

struct PaymentState {
  static inline const char* name = "seatflow.payment";
  std::string payment_no;
  caf::actor router;
  caf::actor persistence;
  PaymentActorLimits limits;
  std::deque<CallbackEnvelope> queue;  // front is in flight when `in_flight`
  std::uint64_t received = 0;          // callbacks the router has forwarded to this actor
  bool in_flight = false;
  bool idle_check_pending = false;
};

// Handles CallbackEnvelope, idle_check_atom and stop_atom.
[[nodiscard]] caf::behavior payment_actor(caf::stateful_actor<PaymentState>* self,
                                          std::string payment_no, caf::actor router,
                                          caf::actor persistence, PaymentActorLimits limits);

}  // namespace seatflow::actors

// Router: maps paymentNo to its payment actor, spawning on demand and forgetting idle ones.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/payment_actor.hpp"

namespace seatflow::actors {

struct RouterLimits {
  std::size_t payment_actors_max = 200'000;
  PaymentActorLimits payment;
};

struct RouterState {
  static inline const char* name = "seatflow.router";
  struct Entry {
    caf::actor actor;
    std::uint64_t forwarded = 0;  // callbacks sent to it; equals its `received` when idle
  };
  std::unordered_map<std::string, Entry> payments;
  PaymentActorLinks links;  // committer, flusher and memory switch for new payment actors
  RouterLimits limits;
  std::shared_ptr<std::atomic<std::size_t>> live_gauge;  // payment actors alive, for /metrics
};

// Handles CallbackEnvelope and idle_atom (the live count is the gauge, read by /metrics).
[[nodiscard]] caf::behavior router_actor(caf::stateful_actor<RouterState>* self,
                                         PaymentActorLinks links, RouterLimits limits,
                                         std::shared_ptr<std::atomic<std::size_t>> live_gauge);

}  // namespace seatflow::actors

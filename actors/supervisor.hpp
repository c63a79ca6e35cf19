// Supervisor: monitors the engine's core actors; one that ends for any reason but a stop is
// logged and reported, so the process stops (non-zero) instead of serving with a part missing.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"

namespace seatflow::actors {

// Told the name of the core actor that died and why; runs on the supervisor's thread.
using CoreDownFn = std::function<void(const std::string& actor, const std::string& reason)>;

// One watched actor. The supervisor only monitors it and sends it nothing, so it holds any actor,
// typed or not, as a reference without an interface.
struct SupervisedActor {
  template <class Handle>
  SupervisedActor(const Handle& handle, std::string actor_name)
      : actor(caf::actor_cast<caf::strong_actor_ptr>(handle)), name(std::move(actor_name)) {}

  caf::strong_actor_ptr actor;
  std::string name;
};

struct SupervisorState {
  static inline const char* name = "seatflow.supervisor";
  std::vector<SupervisedActor> watched;
};

// SupervisorActor: monitors every actor of `watched`; a down message whose reason is not a normal
// exit or user_shutdown calls `on_down` once per actor. Answers count_atom with the number watched.
[[nodiscard]] SupervisorActor::behavior_type supervisor_actor(
    SupervisorActor::stateful_pointer<SupervisorState> self, std::vector<SupervisedActor> watched,
    CoreDownFn on_down);

}  // namespace seatflow::actors

// Supervisor: down messages of the core actors; a stop's exits are expected, anything else fails.
#include "actors/supervisor.hpp"

#include "actors/log.hpp"
#include "actors/messages.hpp"

namespace seatflow::actors {

caf::behavior supervisor_actor(caf::stateful_actor<SupervisorState>* self,
                               std::vector<SupervisedActor> watched, CoreDownFn on_down) {
  for (const auto& entry : watched) {
    self->monitor(entry.actor);
  }
  self->state.watched = std::move(watched);
  self->set_down_handler([self, on_down](caf::down_msg& down) {
    const bool expected =
        down.reason == caf::exit_reason::normal || down.reason == caf::exit_reason::user_shutdown;
    std::string name = "unknown";
    for (const auto& entry : self->state.watched) {
      if (entry.actor->address() == down.source) {
        name = entry.name;
      }
    }
    if (expected) {
      return;
    }
    const auto reason = caf::to_string(down.reason);
    logger().critical("event=core_actor_down actor={} reason={}", name, quoted_value(reason));
    if (on_down) {
      on_down(name, reason);
    }
  });
  return {
      [self](count_atom) { return self->state.watched.size(); },
  };
}

}  // namespace seatflow::actors

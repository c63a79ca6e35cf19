// Supervisor: down messages of the core actors; a stop's exits are expected, anything else fails.
#include "actors/supervisor.hpp"

#include "actors/log.hpp"

namespace seatflow::actors {

SupervisorActor::behavior_type supervisor_actor(
    SupervisorActor::stateful_pointer<SupervisorState> self, std::vector<SupervisedActor> watched,
    CoreDownFn on_down) {
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
      [self](count_atom) -> std::size_t { return self->state.watched.size(); },
  };
}

}  // namespace seatflow::actors

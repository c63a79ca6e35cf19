// The asker: how a caller outside the actor system (an HTTP handler, the dev tools) sends a typed
// request and gets its typed reply without blocking. A short-lived cooperative actor sends the
// request, runs the caller's handler with the reply (or the error: the receiver is gone, the
// timeout passed) and ends. The handler's parameters are checked against the receiver's interface
// when it compiles (tests/typing), as for any actor's request(...).then(...).
#pragma once

#include <utility>

#include <caf/all.hpp>

#include "actors/messages.hpp"

namespace seatflow::actors {
namespace asker_detail {

// `on_reply` with the parameters it declares (CAF checks them against the reply type, so they
// must be spelled out, not deduced), and the asker's end after it.
template <class OnReply, class... Args>
auto then_quit(AskerActor::pointer self, OnReply on_reply, caf::detail::type_list<Args...>) {
  return [self, on_reply = std::move(on_reply)](Args... reply) mutable {
    on_reply(std::forward<Args>(reply)...);
    self->quit();
  };
}

// The asker itself (spawn_asker).
template <class Handle, class OnReply, class OnError, class... Ts>
void spawn_asker_actor(caf::actor_system& system, const Handle& to, caf::duration timeout,
                       OnReply on_reply, OnError on_error, Ts... xs) {
  // The one argument after `self` is not used: CAF 0.17 keeps a spawn's arguments in a
  // shared_ptr<tuple<…>> left null when there are none, and dereferences it all the same (UBSan:
  // a reference bound to a null pointer).
  system.spawn(
      [to, timeout, on_reply = std::move(on_reply), on_error = std::move(on_error), xs...](
          AskerActor::pointer self, int /*unused*/) mutable -> AskerActor::behavior_type {
        using Reply = typename caf::detail::get_callable_trait<OnReply>::arg_types;
        self->request(to, timeout, std::move(xs)...)
            .then(then_quit(self, std::move(on_reply), Reply{}),
                  [self, on_error = std::move(on_error)](caf::error& error) mutable {
                    on_error(error);
                    self->quit();
                  });
        return {
            [self](stop_atom) { self->quit(); },
        };
      },
      0);
}

}  // namespace asker_detail

// Spawns an asker in `system` that requests `xs` of `to` within `timeout`. `on_reply` takes the
// reply as `to`'s interface declares it; `on_error` takes a `const caf::error&`. Exactly one of
// them runs, once, on an actor thread: neither may block.
template <class Handle, class OnReply, class OnError, class... Ts>
void spawn_asker(caf::actor_system& system, const Handle& to, caf::duration timeout,
                 OnReply on_reply, OnError on_error, Ts... xs) {
  // CAF 0.17's spawn pins the system's logger in a thread-local of the spawning thread, and the
  // system's end waits for the logger to go: a thread outside the actor system (an HTTP io
  // thread, which outlives the engine) lets go of it again at once.
  const bool outside = caf::logger::current_logger() == nullptr;
  asker_detail::spawn_asker_actor(system, to, timeout, std::move(on_reply), std::move(on_error),
                                  std::move(xs)...);
  if (outside) {
    caf::logger::set_current_actor_system(nullptr);
  }
}

}  // namespace seatflow::actors

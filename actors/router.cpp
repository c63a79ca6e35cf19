// Router: one payment actor per paymentNo, bounded in number.
#include <cassert>

#include "actors/router.hpp"

namespace seatflow::actors {

caf::behavior router_actor(caf::stateful_actor<RouterState>* self, PaymentActorLinks links,
                           RouterLimits limits,
                           std::shared_ptr<std::atomic<std::size_t>> live_gauge) {
  assert(links.committer);
  auto& st = self->state;
  st.links = std::move(links);
  st.links.router = caf::actor{self};
  st.limits = limits;
  st.live_gauge = std::move(live_gauge);
  // Payment actors are not linked to the router: CAF 0.17 removes a link by scanning the
  // attachables of both sides, which made every passivation cost O(live actors). The router keeps
  // their handles and stops them itself when it is told to exit.
  self->set_exit_handler([self](const caf::exit_msg& msg) {
    auto& st = self->state;
    for (auto& [key, entry] : st.payments) {
      self->send_exit(entry.actor, msg.reason);
    }
    st.payments.clear();
    st.live_gauge->store(0, std::memory_order_relaxed);
    self->quit(msg.reason);
  });
  return {
      [self](CallbackEnvelope& envelope) {
        auto& st = self->state;
        auto it = st.payments.find(envelope.callback.payment_no);
        if (it == st.payments.end()) {
          if (st.payments.size() >= st.limits.payment_actors_max) {
            envelope.reply({domain::CallbackResult::unavailable, "too many active payments"});
            return;
          }
          const auto& key = envelope.callback.payment_no;
          auto actor = self->spawn(payment_actor, key, st.links, st.limits.payment);
          it = st.payments.emplace(key, RouterState::Entry{std::move(actor), 0}).first;
          st.live_gauge->store(st.payments.size(), std::memory_order_relaxed);
        }
        ++it->second.forwarded;
        self->send(it->second.actor, std::move(envelope));
      },
      [self](idle_atom, const std::string& payment_no, std::uint64_t received) {
        auto& st = self->state;
        const auto it = st.payments.find(payment_no);
        // Only when every forwarded callback has reached the actor is it safe to forget it;
        // otherwise callbacks are still in its mailbox and it will report idle again later.
        if (it == st.payments.end() || it->second.forwarded != received) {
          return;
        }
        self->send(it->second.actor, stop_atom::value);
        st.payments.erase(it);
        st.live_gauge->store(st.payments.size(), std::memory_order_relaxed);
      },
  };
}

}  // namespace seatflow::actors

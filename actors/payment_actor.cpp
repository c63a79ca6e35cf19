// Payment actor: queue, hand the front to persistence, reply, repeat; passivate when idle.
#include <cassert>

#include "actors/payment_actor.hpp"

namespace seatflow::actors {
namespace {

using Self = caf::stateful_actor<PaymentState>;

void schedule_idle_check(Self* self) {
  auto& st = self->state;
  if (st.idle_check_pending) {
    return;
  }
  st.idle_check_pending = true;
  self->delayed_send(self, std::chrono::milliseconds(st.limits.passivate_idle_ms),
                     idle_check_atom::value, st.received);
}

void start_next(Self* self);

void finish_front(Self* self, const domain::CallbackOutcome& outcome) {
  auto& st = self->state;
  assert(st.in_flight && !st.queue.empty());
  st.queue.front().reply(outcome);
  st.queue.pop_front();
  st.in_flight = false;
  start_next(self);
}

void start_next(Self* self) {
  auto& st = self->state;
  if (st.in_flight) {
    return;
  }
  if (st.queue.empty()) {
    schedule_idle_check(self);
    return;
  }
  st.in_flight = true;
  const auto timeout = std::chrono::milliseconds(st.limits.persist_timeout_ms);
  PersistRequest request{st.queue.front().callback, std::chrono::steady_clock::now() + timeout};
  self->request(st.persistence, timeout, std::move(request))
      .then([self](const domain::CallbackOutcome& outcome) { finish_front(self, outcome); },
            [self](const caf::error&) {
              finish_front(self, {domain::CallbackResult::unavailable, "commit timed out"});
            });
}

}  // namespace

caf::behavior payment_actor(Self* self, std::string payment_no, caf::actor router,
                            caf::actor persistence, PaymentActorLimits limits) {
  auto& st = self->state;
  st.payment_no = std::move(payment_no);
  st.router = std::move(router);
  st.persistence = std::move(persistence);
  st.limits = limits;
  return {
      [self](CallbackEnvelope& envelope) {
        auto& st = self->state;
        ++st.received;
        if (st.queue.size() >= st.limits.mailbox_limit) {
          envelope.reply({domain::CallbackResult::unavailable, "payment queue full"});
          return;
        }
        st.queue.push_back(std::move(envelope));
        start_next(self);
      },
      [self](idle_check_atom, std::uint64_t received_then) {
        auto& st = self->state;
        st.idle_check_pending = false;
        if (st.in_flight || !st.queue.empty()) {
          return;
        }
        if (received_then != st.received) {
          schedule_idle_check(self);
          return;
        }
        self->send(st.router, idle_atom::value, st.payment_no, st.received);
      },
      [self](stop_atom) { self->quit(); },
  };
}

}  // namespace seatflow::actors

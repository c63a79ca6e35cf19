// One use of the typed actor interfaces of actors/messages.hpp, chosen by the SEATFLOW_TYPING_*
// macro the build defines. The typing test compiles it once per case: a message an actor declares
// (or a behaviour that matches its interface) must compile; one it does not declare must fail the
// build, with the typed-actor check's own error (tests/typing/check.sh).
#include "actors/messages.hpp"

namespace seatflow::actors {

// Compiled, never called: only the messages' types matter here.
void seatflow_typing_probe(const RouterActor& router, const PaymentActor& payment,
                           const DuplicateFlusherActor& flusher, const QueryActor& query,
                           const RefundActor& refund) {
#if defined(SEATFLOW_TYPING_ROUTER_TAKES_A_CALLBACK)
  caf::anon_send(router, CallbackEnvelope{});
#elif defined(SEATFLOW_TYPING_ROUTER_REFUSES_STOP)
  caf::anon_send(router, stop_atom::value);
#elif defined(SEATFLOW_TYPING_PAYMENT_TAKES_STOP)
  caf::anon_send(payment, stop_atom::value);
#elif defined(SEATFLOW_TYPING_PAYMENT_REFUSES_A_PERSIST_REQUEST)
  caf::anon_send(payment, PersistRequest{});
#elif defined(SEATFLOW_TYPING_FLUSHER_TAKES_A_FLUSH)
  caf::anon_send(flusher, flush_atom::value, true);
#elif defined(SEATFLOW_TYPING_FLUSHER_REFUSES_A_FLUSH_WITHOUT_WAIT)
  caf::anon_send(flusher, flush_atom::value);
#elif defined(SEATFLOW_TYPING_QUERY_TAKES_A_SYNC)
  caf::anon_send(query, SyncJob{});
#elif defined(SEATFLOW_TYPING_QUERY_REFUSES_A_REFUND)
  caf::anon_send(query, RefundJob{});
#elif defined(SEATFLOW_TYPING_REFUND_TAKES_A_REFUND)
  caf::anon_send(refund, RefundJob{});
#elif defined(SEATFLOW_TYPING_REFUND_REFUSES_A_SYNC)
  caf::anon_send(refund, SyncJob{});
#endif
}

// The router's side of its payment actors, as a typed actor sends.
void seatflow_typing_router(RouterActor::pointer self, const PaymentActor& payment) {
#if defined(SEATFLOW_TYPING_PAYMENT_TAKES_ASSIGN)
  self->send(payment, assign_atom::value, std::string("P-1"));
#elif defined(SEATFLOW_TYPING_PAYMENT_REFUSES_ASSIGN_WITHOUT_PAYMENT_NO)
  self->send(payment, assign_atom::value);
#elif defined(SEATFLOW_TYPING_ROUTER_REFUSES_A_SELF_TICK_IT_DOES_NOT_DECLARE)
  self->delayed_send(self, std::chrono::milliseconds(1), fill_atom::value);
#endif
}

// A payment actor's request to the commit batcher and the handler of its answer.
void seatflow_typing_payment(PaymentActor::pointer self, const CommitBatcherActor& batcher) {
#if defined(SEATFLOW_TYPING_BATCHER_ANSWERS_A_PERSIST_REQUEST_WITH_AN_OUTCOME)
  self->request(batcher, caf::infinite, PersistRequest{})
      .then([](const domain::CallbackOutcome&) {}, [](const caf::error&) {});
#elif defined(SEATFLOW_TYPING_BATCHER_REFUSES_A_BATCH)
  self->request(batcher, caf::infinite, PersistBatch{})
      .then([](const BatchOutcome&) {}, [](const caf::error&) {});
#elif defined(SEATFLOW_TYPING_BATCHER_ANSWER_IS_NOT_A_BATCH_OUTCOME)
  self->request(batcher, caf::infinite, PersistRequest{})
      .then([](const BatchOutcome&) {}, [](const caf::error&) {});
#endif
}

// A persistence actor's behaviour, checked against its interface.
PersistenceActor::behavior_type seatflow_typing_persistence(PersistenceActor::pointer /*self*/) {
#if defined(SEATFLOW_TYPING_PERSISTENCE_BEHAVIOUR_WITHOUT_THE_FLUSH)
  return {[](PersistBatch&) { return BatchOutcome{}; }};
#elif defined(SEATFLOW_TYPING_PERSISTENCE_BEHAVIOUR_ANSWERS_A_FLUSH_WITH_A_BOOL)
  return {[](PersistBatch&) { return BatchOutcome{}; }, [](FlushJob&) { return true; }};
#else
  return {[](PersistBatch&) { return BatchOutcome{}; },
          [](FlushJob&) { return persistence::FlushResult{}; }};
#endif
}

}  // namespace seatflow::actors

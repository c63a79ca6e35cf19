// One use of the typed actor interfaces of actors/messages.hpp (and, in the dev layer, of the mock
// gateway's), chosen by the SEATFLOW_TYPING_* macro the build defines. The typing test compiles it
// once per case: a message an actor declares, a reply handler of the type it answers (or a
// behaviour that matches its interface) must compile; a message it does not declare, or a reply
// handler of another type, must fail the build, with the typed-actor check's own error
// (tests/typing/check.sh).
#include "actors/asker.hpp"
#include "actors/bill_runner.hpp"
#include "actors/discrepancy_refunder.hpp"
#include "actors/messages.hpp"
#include "actors/payment_querier.hpp"
#if defined(SEATFLOW_TYPING_DEV)
#include "dev/mock_gateway_actor.hpp"
#endif

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

// The actors the engine sends to, or that only tick themselves: each takes its own message and
// refuses another actor's.
void seatflow_typing_jobs(const ApiActor& api, const SweeperActor& sweeper,
                          const HealthActor& health, const ReconcilerActor& reconciler,
                          const EventRelayActor& relay, const RetentionActor& retention,
                          const BillActor& bill, const SupervisorActor& supervisor) {
#if defined(SEATFLOW_TYPING_API_TAKES_A_JOB)
  caf::anon_send(api, ApiJob{});
#elif defined(SEATFLOW_TYPING_API_REFUSES_A_SYNC)
  caf::anon_send(api, SyncJob{});
#elif defined(SEATFLOW_TYPING_SWEEPER_TAKES_A_SWEEP)
  caf::anon_send(sweeper, sweep_atom::value);
#elif defined(SEATFLOW_TYPING_SWEEPER_REFUSES_A_RELAY_TICK)
  caf::anon_send(sweeper, relay_atom::value);
#elif defined(SEATFLOW_TYPING_HEALTH_TAKES_A_PROBE)
  caf::anon_send(health, probe_atom::value);
#elif defined(SEATFLOW_TYPING_HEALTH_REFUSES_A_SWEEP)
  caf::anon_send(health, sweep_atom::value);
#elif defined(SEATFLOW_TYPING_RECONCILER_TAKES_A_RECONCILE)
  caf::anon_send(reconciler, reconcile_atom::value);
#elif defined(SEATFLOW_TYPING_RECONCILER_REFUSES_A_RETAIN)
  caf::anon_send(reconciler, retain_atom::value);
#elif defined(SEATFLOW_TYPING_RELAY_TAKES_A_RELAY)
  caf::anon_send(relay, relay_atom::value);
#elif defined(SEATFLOW_TYPING_RELAY_REFUSES_A_RECONCILE)
  caf::anon_send(relay, reconcile_atom::value);
#elif defined(SEATFLOW_TYPING_RETENTION_TAKES_A_RETAIN)
  caf::anon_send(retention, retain_atom::value);
#elif defined(SEATFLOW_TYPING_RETENTION_REFUSES_A_RELAY)
  caf::anon_send(retention, relay_atom::value);
#elif defined(SEATFLOW_TYPING_BILL_TAKES_A_JOB)
  caf::anon_send(bill, BillJob{});
#elif defined(SEATFLOW_TYPING_BILL_REFUSES_A_SYNC)
  caf::anon_send(bill, SyncJob{});
#elif defined(SEATFLOW_TYPING_SUPERVISOR_REFUSES_STOP)
  caf::anon_send(supervisor, stop_atom::value);
#endif
}

// An actor's self-tick, as the actor sends it.
void seatflow_typing_ticks(SweeperActor::pointer sweeper, BillActor::pointer bill) {
#if defined(SEATFLOW_TYPING_SWEEPER_TICKS_ITSELF)
  sweeper->delayed_send(sweeper, std::chrono::milliseconds(1), sweep_atom::value);
#elif defined(SEATFLOW_TYPING_BILL_TICKS_ITSELF)
  bill->delayed_send(bill, std::chrono::milliseconds(1), bill_tick_atom::value);
#elif defined(SEATFLOW_TYPING_BILL_REFUSES_A_QUERY_TICK)
  bill->delayed_send(bill, std::chrono::milliseconds(1), query_tick_atom::value);
#endif
}

// Typed replies, as a caller outside the actor system gets them (Engine::ask → spawn_asker): the
// reply handler's parameters must be what the receiver's interface answers.
void seatflow_typing_replies(caf::actor_system& system, const QueryActor& query,
                             const RefundActor& refund, const BillActor& bill,
                             const SupervisorActor& supervisor) {
  [[maybe_unused]] const auto failed = [](const caf::error&) {};
#if defined(SEATFLOW_TYPING_QUERY_ANSWERS_A_SYNC_WITH_KNOWN_AND_A_RUN)
  spawn_asker(
      system, query, caf::infinite, [](bool, const QueryRun&) {}, failed, SyncJob{});
#elif defined(SEATFLOW_TYPING_QUERY_ANSWER_IS_NOT_A_RUN_ALONE)
  spawn_asker(
      system, query, caf::infinite, [](const QueryRun&) {}, failed, SyncJob{});
#elif defined(SEATFLOW_TYPING_REFUND_ANSWERS_A_REFUND_WITH_A_RUN)
  spawn_asker(
      system, refund, caf::infinite, [](const RefundRun&) {}, failed, RefundJob{});
#elif defined(SEATFLOW_TYPING_REFUND_ANSWER_IS_NOT_A_QUERY_RUN)
  spawn_asker(
      system, refund, caf::infinite, [](bool, const QueryRun&) {}, failed, RefundJob{});
#elif defined(SEATFLOW_TYPING_BILL_ANSWERS_A_JOB_WITH_THE_RUN)
  spawn_asker(
      system, bill, caf::infinite, [](const BillRunResult&) {}, failed, BillJob{});
#elif defined(SEATFLOW_TYPING_BILL_ANSWER_IS_NOT_A_REFUND_RUN)
  spawn_asker(
      system, bill, caf::infinite, [](const RefundRun&) {}, failed, BillJob{});
#elif defined(SEATFLOW_TYPING_BILL_TICK_HAS_NO_ANSWER)
  spawn_asker(
      system, bill, caf::infinite, [](const BillRunResult&) {}, failed, bill_tick_atom::value);
#elif defined(SEATFLOW_TYPING_SUPERVISOR_ANSWERS_A_COUNT)
  spawn_asker(
      system, supervisor, caf::infinite, [](std::size_t) {}, failed, count_atom::value);
#elif defined(SEATFLOW_TYPING_SUPERVISOR_ANSWER_IS_NOT_A_BOOL)
  spawn_asker(
      system, supervisor, caf::infinite, [](bool) {}, failed, count_atom::value);
#endif
}

// Behaviours, checked against their interfaces: a reply the interface declares must be returned.
BillActor::behavior_type seatflow_typing_bill(BillActor::pointer /*self*/) {
#if defined(SEATFLOW_TYPING_BILL_BEHAVIOUR_WITHOUT_AN_ANSWER)
  return {[](BillJob&) {}, [](bill_tick_atom) {}};
#else
  return {[](BillJob&) { return BillRunResult{}; }, [](bill_tick_atom) {}};
#endif
}

QueryActor::behavior_type seatflow_typing_query(QueryActor::pointer /*self*/) {
#if defined(SEATFLOW_TYPING_QUERY_BEHAVIOUR_ANSWERS_A_RUN_ALONE)
  return {[](query_tick_atom) {}, [](SyncJob&) { return QueryRun{}; }};
#else
  return {[](query_tick_atom) {},
          [](SyncJob&) -> caf::result<bool, QueryRun> {
            return {true, QueryRun{}};
          }};
#endif
}

#if defined(SEATFLOW_TYPING_DEV)
// The dev mock gateway's interface (dev/mock_gateway_actor.hpp), compiled in the dev layer.
void seatflow_typing_mock(caf::actor_system& system, const dev::MockGatewayActor& mock) {
  [[maybe_unused]] const auto failed = [](const caf::error&) {};
#if defined(SEATFLOW_TYPING_DEV_MOCK_TAKES_A_DELIVERY)
  caf::anon_send(mock, dev::MockDelivery{});
#elif defined(SEATFLOW_TYPING_DEV_MOCK_REFUSES_A_SYNC)
  caf::anon_send(mock, SyncJob{});
#elif defined(SEATFLOW_TYPING_DEV_MOCK_REFUSES_A_PAY_WITHOUT_DELIVERY)
  caf::anon_send(mock, dev::pay_atom::value);
#elif defined(SEATFLOW_TYPING_DEV_MOCK_ANSWERS_A_PAY_WITH_WHAT_IT_DELIVERED)
  spawn_asker(
      system, mock, caf::infinite, [](const dev::MockDelivered&) {}, failed, dev::pay_atom::value,
      dev::MockDelivery{});
#elif defined(SEATFLOW_TYPING_DEV_MOCK_ANSWER_IS_NOT_A_STATUS)
  spawn_asker(
      system, mock, caf::infinite, [](int) {}, failed, dev::pay_atom::value, dev::MockDelivery{});
#endif
}
#endif

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

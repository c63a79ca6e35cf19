// The protocol of SeatFlow's actor system: every message type and atom, one comment each, and the
// typed interface (caf::typed_actor) of every core actor (the callback path, the query and refund
// actors, the API pool, the background jobs, the readiness prober, the bill actor, the supervisor,
// the asker), so a message an actor does not declare, or a reply of another type than the one it
// declares, fails to compile (tests/typing). The dev tools' mock gateway declares its interface
// beside it (dev/mock_gateway_actor.hpp): actors/ never includes dev/. These types never leave the
// process, so they are allowed as unsafe (non-serialisable) types.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "domain/outcome.hpp"
#include "domain/types.hpp"
#include "persistence/stores/bill_store.hpp"
#include "persistence/stores/duplicate_flush.hpp"

namespace seatflow::persistence {
class OrderStore;
}

namespace seatflow::actors {

// The replies of the query, refund and bill actors, declared beside the code that makes them; a
// sender or a handler of one includes that header.
struct QueryRun;       // actors/payment_querier.hpp
struct RefundRun;      // actors/discrepancy_refunder.hpp
struct BillRunResult;  // actors/bill_runner.hpp
struct GatewayAnswer;  // actors/payment_gateway_caller.hpp

// Delivers a callback's outcome to whoever waits for it (the HTTP session); it must not block:
// the HTTP layer's callback only posts onto its own executor.
using ReplyFn = std::function<void(const domain::CallbackOutcome&)>;

// A verified callback travelling HTTP → router → payment actor, with its reply path.
struct CallbackEnvelope {
  domain::VerifiedCallback callback;
  ReplyFn reply;
  std::chrono::steady_clock::time_point received_at;
};

// A callback handed from a payment actor to the commit batcher, which groups it into a
// PersistBatch. The batcher answers it unavailable once its deadline has passed (the payment
// actor sets no timer of its own), and past its deadline it is never run.
struct PersistRequest {
  domain::VerifiedCallback callback;
  std::chrono::steady_clock::time_point deadline;
};

// Many payments' callbacks for one transaction: commit batcher → persistence actor. Each callback
// carries its deadline: past it, the executor never runs it.
struct PersistBatch {
  std::vector<domain::VerifiedCallback> callbacks;
  std::vector<std::chrono::steady_clock::time_point> deadlines;  // one per callback
};

// One outcome per callback of a PersistBatch, in order.
struct BatchOutcome {
  std::vector<domain::CallbackOutcome> outcomes;
};

// Duplicate counts and payments to heal, for one transaction: flusher → persistence actor.
struct FlushJob {
  std::vector<std::pair<std::string, std::pair<std::string, std::int64_t>>> counts;
  std::vector<std::string> heal_payments;
  std::vector<persistence::DoubtfulFlush> doubtful;  // earlier flushes whose commit is in doubt
};

// Work for an API actor: runs with that actor's OrderStore (blocking calls are allowed there). It
// is the HTTP layer's handler code itself, shipped to the actor that owns the store, and it
// answers through the HTTP reply it captured: the API actor has no reply of its own to type.
struct ApiJob {
  std::function<void(persistence::OrderStore& store)> run;
};

// A sync request (POST /api/payments/{paymentNo}/sync) → query actor: query the payment's
// gateway now, apply the answer; answered (known = the payment exists, the query's run).
struct SyncJob {
  std::string payment_no;
};

// An API call that needs a payment's gateway (SPEC §16) → a gateway actor: create the payment
// there (POST /api/payments) or close it there (POST /api/payments/{paymentNo}/close); answered
// with what the gateway confirmed. The local move, if any, is the API actor's afterwards.
struct GatewayJob {
  bool close = false;  // false: create
  std::string payment_no;
};

// A refund request (POST /api/discrepancies/{id}/refund) → refund actor: refund the discrepancy;
// answered with the refund's run. The engine has claimed the discrepancy first.
struct RefundJob {
  std::int64_t discrepancy_id = 0;
};

// engine → bill actor: run the channel's bill of `date` (SPEC §13); answered with the run's end
// once it is over. With `run` (POST /api/bill-runs opened it on an API actor, so its answer does
// not wait for the run in progress here) the actor runs that run; without, it opens one first.
struct BillJob {
  domain::Channel channel = domain::Channel::hmac;
  std::string date;
  std::optional<persistence::BillRunRow> run;
};

// router → payment actor: stop now, the router has forgotten you (payment actor passivation).
using stop_atom = caf::atom_constant<caf::atom("stop")>;
// router → payment actor: the router has forgotten your payment; forget it too and wait, a spare,
// for the next one (passivation without an actor's end: docs/ARCHITECTURE.md, step 4).
using retire_atom = caf::atom_constant<caf::atom("retire")>;
// router → a spare payment actor: (assign_atom, payment_no): serve this payment from now on.
using assign_atom = caf::atom_constant<caf::atom("assign")>;
// payment actor → router: my queue is empty; (payment_no, callbacks received so far).
using idle_atom = caf::atom_constant<caf::atom("idle")>;
// router → itself: retire or stop the payment actors idle for passivate_idle_ms.
using passivate_atom = caf::atom_constant<caf::atom("passivate")>;
// anyone → supervisor: how many core actors it watches (tests).
using count_atom = caf::atom_constant<caf::atom("count")>;
// (flush_atom, bool wait): flusher timer tick (false), or flush now and answer when done (true).
using flush_atom = caf::atom_constant<caf::atom("flush")>;
// anyone → duplicate flusher: the duplicate ledger has notes again; arm the flush timer.
using ledger_atom = caf::atom_constant<caf::atom("ledger")>;
// sweeper → itself: time for a sweep of expired orders.
using sweep_atom = caf::atom_constant<caf::atom("sweep")>;
// event relay → itself: publish the next batch of the payment-event outbox.
using relay_atom = caf::atom_constant<caf::atom("relay")>;
// retention actor → itself: purge the next batch of rows past the retention horizon.
using retain_atom = caf::atom_constant<caf::atom("retain")>;
// commit batcher → itself: the fill wait of the oldest queued callback is over; dispatch now.
using fill_atom = caf::atom_constant<caf::atom("fill")>;
// commit batcher → itself: answer the callbacks whose deadline has passed.
using deadline_atom = caf::atom_constant<caf::atom("deadline")>;
// readiness prober → itself: time for the next probe of both stores.
using probe_atom = caf::atom_constant<caf::atom("probe")>;
// reconciler → itself: run the next batch of the pass.
using reconcile_atom = caf::atom_constant<caf::atom("reconcile")>;
// query actor → itself: look for due rows of the query schedule.
using query_tick_atom = caf::atom_constant<caf::atom("qtick")>;
// bill actor → itself: time to look at the schedule.
using bill_tick_atom = caf::atom_constant<caf::atom("billtick")>;
// refund actor → itself: time to refund the new paid_after_cancel discrepancies
// (SEATFLOW_AUTO_REFUND=paid_after_cancel, SPEC §16).
using auto_refund_atom = caf::atom_constant<caf::atom("autorefund")>;

// -- Typed interfaces -------------------------------------------------------------------------
// Each lists every message its actor takes, including the timer ticks it sends itself; exit and
// down messages need no entry (set_exit_handler, set_down_handler). Handles are held and sent to
// only as these types, and each actor's behaviour is checked against its interface (exact match).

// The router (actors/router.hpp): CallbackEnvelope from the engine; (idle_atom, payment_no,
// callbacks received) from its payment actors; passivate_atom from itself.
using RouterActor = caf::typed_actor<caf::reacts_to<CallbackEnvelope>,
                                     caf::reacts_to<idle_atom, std::string, std::uint64_t>,
                                     caf::reacts_to<passivate_atom>>;

// A payment actor (actors/payment_actor.hpp), from the router: the callbacks of its payment,
// stop_atom, retire_atom and (assign_atom, payment_no).
using PaymentActor =
    caf::typed_actor<caf::reacts_to<CallbackEnvelope>, caf::reacts_to<stop_atom>,
                     caf::reacts_to<retire_atom>, caf::reacts_to<assign_atom, std::string>>;

// The commit batcher (actors/commit_batcher.hpp): PersistRequest → CallbackOutcome from the
// payment actors; fill_atom and deadline_atom from itself.
using CommitBatcherActor =
    caf::typed_actor<caf::replies_to<PersistRequest>::with<domain::CallbackOutcome>,
                     caf::reacts_to<fill_atom>, caf::reacts_to<deadline_atom>>;

// The duplicate flusher (actors/commit_batcher.hpp): ledger_atom from whoever notes a duplicate;
// (flush_atom, wait) → whether the flush committed, from its timer (false) or the engine (true).
using DuplicateFlusherActor =
    caf::typed_actor<caf::reacts_to<ledger_atom>, caf::replies_to<flush_atom, bool>::with<bool>>;

// A persistence actor (actors/persistence_actor.hpp): PersistBatch → BatchOutcome from the commit
// batcher, FlushJob → FlushResult from the duplicate flusher.
using PersistenceActor =
    caf::typed_actor<caf::replies_to<PersistBatch>::with<BatchOutcome>,
                     caf::replies_to<FlushJob>::with<persistence::FlushResult>>;

// The query actor (actors/query_actor.hpp): SyncJob → (known, QueryRun) from the engine's asker;
// query_tick_atom from itself.
using QueryActor = caf::typed_actor<caf::reacts_to<query_tick_atom>,
                                    caf::replies_to<SyncJob>::with<bool, QueryRun>>;

// The refund actor (actors/refund_actor.hpp): RefundJob → RefundRun from the engine's asker;
// auto_refund_atom from itself (only when automatic refunds are on).
using RefundActor =
    caf::typed_actor<caf::replies_to<RefundJob>::with<RefundRun>, caf::reacts_to<auto_refund_atom>>;

// A gateway actor (actors/gateway_actor.hpp): GatewayJob → GatewayAnswer from the engine's asker.
using GatewayActor = caf::typed_actor<caf::replies_to<GatewayJob>::with<GatewayAnswer>>;

// An API actor (actors/api_actor.hpp): ApiJob from the engine (Engine::run_api).
using ApiActor = caf::typed_actor<caf::reacts_to<ApiJob>>;

// The sweeper (actors/api_actor.hpp): sweep_atom from itself.
using SweeperActor = caf::typed_actor<caf::reacts_to<sweep_atom>>;

// The readiness prober (actors/health_actor.hpp): probe_atom from itself. It answers nothing:
// /readyz reads what it publishes.
using HealthActor = caf::typed_actor<caf::reacts_to<probe_atom>>;

// The reconciler (actors/reconciler_actor.hpp): reconcile_atom from itself.
using ReconcilerActor = caf::typed_actor<caf::reacts_to<reconcile_atom>>;

// The event relay (actors/event_relay_actor.hpp): relay_atom from itself.
using EventRelayActor = caf::typed_actor<caf::reacts_to<relay_atom>>;

// The retention actor (actors/retention_actor.hpp): retain_atom from itself.
using RetentionActor = caf::typed_actor<caf::reacts_to<retain_atom>>;

// The bill actor (actors/bill_actor.hpp): BillJob → BillRunResult from the engine (which does not
// wait for it: the HTTP answer went out when the run was opened); bill_tick_atom from itself.
using BillActor =
    caf::typed_actor<caf::replies_to<BillJob>::with<BillRunResult>, caf::reacts_to<bill_tick_atom>>;

// The supervisor (actors/supervisor.hpp): count_atom → how many core actors it watches (tests).
// The down messages of the actors it monitors need no entry.
using SupervisorActor = caf::typed_actor<caf::replies_to<count_atom>::with<std::size_t>>;

// An asker (actors/asker.hpp): a short-lived actor that sends one typed request on behalf of a
// caller outside the actor system (an HTTP handler, the dev tools) and hands the typed reply to
// it. It takes no message of its own but the reply it awaits; CAF 0.17 refuses an empty
// interface, so it declares stop_atom (stop waiting), which nobody sends today.
using AskerActor = caf::typed_actor<caf::reacts_to<stop_atom>>;

}  // namespace seatflow::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::CallbackEnvelope)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::PersistRequest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::ApiJob)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::PersistBatch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::BatchOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::FlushJob)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::persistence::FlushResult)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::SyncJob)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::RefundJob)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::GatewayJob)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::GatewayAnswer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::BillJob)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::QueryRun)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::RefundRun)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::BillRunResult)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::domain::CallbackOutcome)

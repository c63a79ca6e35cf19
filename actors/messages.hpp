// The protocol of SeatFlow's actor system: every message type and atom, one comment each, and the
// typed interface (caf::typed_actor) of the actors on the callback path (router, payment actor,
// commit batcher, duplicate flusher, persistence actor) and of the query and refund actors, so a
// message an actor does not declare fails to compile (tests/typing). The other actors (the API
// pool, the background jobs, the readiness prober, the supervisor, the dev tools) are dynamically
// typed; the messages they take are declared here too. These types never leave the process, so
// they are allowed as unsafe (non-serialisable) types.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "domain/outcome.hpp"
#include "domain/types.hpp"
#include "persistence/stores/duplicate_flush.hpp"

namespace seatflow::persistence {
class OrderStore;
}

namespace seatflow::actors {

struct QueryRun;   // actors/payment_querier.hpp
struct RefundRun;  // actors/discrepancy_refunder.hpp

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

// Work for an API actor: runs with that actor's OrderStore (blocking calls are allowed there) and
// answers through whatever reply path it captured.
struct ApiJob {
  std::function<void(persistence::OrderStore& store)> run;
};

// A sync request (POST /api/payments/{paymentNo}/sync) → query actor: query the payment's
// gateway now, apply the answer, reply on the query actor's thread (known = the payment exists).
struct SyncJob {
  std::string payment_no;
  std::function<void(bool known, const QueryRun& run)> reply;
};

// A refund request (POST /api/discrepancies/{id}/refund) → refund actor: refund the discrepancy,
// reply on the refund actor's thread. The engine has claimed the discrepancy first.
struct RefundJob {
  std::int64_t discrepancy_id = 0;
  std::function<void(const RefundRun& run)> reply;
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

// The query actor (actors/query_actor.hpp): SyncJob from the engine; query_tick_atom from itself.
using QueryActor = caf::typed_actor<caf::reacts_to<query_tick_atom>, caf::reacts_to<SyncJob>>;

// The refund actor (actors/refund_actor.hpp): RefundJob from the engine.
using RefundActor = caf::typed_actor<caf::reacts_to<RefundJob>>;

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
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::domain::CallbackOutcome)

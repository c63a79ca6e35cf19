// Every message of SeatFlow's actor system, declared in one place with one comment each.
// These types never leave the process, so they are allowed as unsafe (non-serialisable) types.
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
// anyone → router: how many payment actors are alive (tests, metrics); → supervisor: how many
// core actors it watches.
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

}  // namespace seatflow::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::CallbackEnvelope)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::PersistRequest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::ApiJob)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::PersistBatch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::BatchOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::actors::FlushJob)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::persistence::FlushResult)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::domain::CallbackOutcome)

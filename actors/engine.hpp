// The actor system of one SeatFlow engine: the router and its payment actors, the commit batcher
// over the persistence pool, the API pool, the readiness prober, the background actors (event
// relay, sweeper, reconciler, retention, query scheduler) and the extra actors a library outside
// the core adds (dev/: the mock gateway), all under the supervisor.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "actors/api_actor.hpp"
#include "actors/asker.hpp"
#include "actors/bill_actor.hpp"
#include "actors/bill_lease.hpp"
#include "actors/commit_batcher.hpp"
#include "actors/engine_probe.hpp"
#include "actors/event_relay_actor.hpp"
#include "actors/gateway_actor.hpp"
#include "actors/health_actor.hpp"
#include "actors/messages.hpp"
#include "actors/persistence_actor.hpp"
#include "actors/query_actor.hpp"
#include "actors/readiness.hpp"
#include "actors/reconciler_actor.hpp"
#include "actors/refund_actor.hpp"
#include "actors/retention_actor.hpp"
#include "actors/router.hpp"
#include "actors/supervisor.hpp"
#include "observability/registry.hpp"

namespace seatflow::actors {

// An actor a library outside the core (dev/: the mock gateway) has the engine spawn in its actor
// system, supervise as a core actor and stop with the others. The library keeps the typed handle
// of what it spawned (as a weak reference: the engine's reference is the one that keeps the actor,
// and it goes at the stop) and sends through Engine::tell and Engine::ask; the engine only holds
// a reference without an interface, to monitor and stop it.
struct ExtraActor {
  std::string name;  // what the supervisor reports it as
  std::function<caf::strong_actor_ptr(caf::actor_system& system)> spawn;
};

// Why an actor's typed reply did not come (Engine::ask): the receiver is gone, the timeout passed,
// or the engine is stopping (then caf::sec::request_receiver_down).
using AskFailedFn = std::function<void(const caf::error& why)>;

struct EngineSettings {
  StoreSettings store;  // its watchdog is made by the engine
  ProberSettings prober;
  std::string scheduler_policy = "sharing";  // sharing | stealing (bench/tune.sh measures both)
  std::size_t scheduler_threads = 1;
  std::size_t pg_pool_size = 2;
  RouterLimits router;
  BatcherLimits batcher;
  FlusherSettings flusher;
  bool memory_duplicates = true;  // fold and answer committed duplicates from memory
  std::size_t api_pool_size = 2;
  SweeperSettings sweeper;
  EventRelaySettings event_relay;
  RetentionSettings retention;
  ReconcilerSettings reconciler;
  // Active query (SPEC §10): the scheduler's settings, the channels' dialects (none: no querying),
  // the outbound client's limits and trust store, and how long a sync or sweeper query waits for
  // the pipeline's answer.
  QuerySettings query;
  std::vector<std::shared_ptr<const channels::QueryDialect>> query_dialects;
  net::ClientLimits query_client;
  std::string query_ca_file;
  std::uint32_t query_apply_timeout_ms = 10'000;
  // Discrepancy refunds (SPEC §12): the channels' refund dialects (none: nothing is refundable),
  // sent with the query's client limits and trust store.
  std::vector<std::shared_ptr<const channels::RefundDialect>> refund_dialects;
  // SEATFLOW_AUTO_REFUND=paid_after_cancel (SPEC §16): such discrepancies refunded at once.
  AutoRefundSettings auto_refund;
  // Bill reconciliation (SPEC §13): its settings and the channels' bill dialects (none: no runs),
  // fetched with the query's connect timeout and trust store under the bill client's bounds.
  BillSettings bill;
  std::vector<std::shared_ptr<const channels::BillDialect>> bill_dialects;
  // The payment at its gateway (SPEC §16): the channels' create and close dialects (none: payments
  // are created here only and closed locally), sent with the query's client limits and trust
  // store; the gateway actors' settings.
  std::vector<std::shared_ptr<const channels::PaymentGatewayDialect>> payment_dialects;
  GatewaySettings gateway;
  // Spawned last, in this order; each name at most once.
  std::vector<ExtraActor> extra_actors;
  // Called (on the supervisor's thread) when a core actor ends for any reason but a stop.
  CoreDownFn on_core_down;
  // Where the engine's probes (engine, query, refund) register; it must outlive the engine.
  // Null: the engine keeps a registry of its own (tests that read the probes directly).
  observability::Registry* metrics = nullptr;
};

class Engine {
 public:
  explicit Engine(EngineSettings settings);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Hands a verified callback to its payment actor; `reply` runs exactly once, on an actor thread.
  // A copy of a callback its payment actor has published as committed (SettledAnswers) is
  // answered `duplicate` at once instead, on the caller's thread, before submit returns.
  void submit(domain::VerifiedCallback callback, ReplyFn reply);
  // The same memory answer without a submit: true when `callback` is a copy of a callback its
  // payment actor has published as committed; the copy is then noted in the duplicate ledger and
  // the caller answers it `duplicate` itself. False (nothing done) when it must be submitted, or
  // the engine is stopping (submit answers unavailable). Any thread; never blocks.
  [[nodiscard]] bool answer_settled(const domain::VerifiedCallback& callback);
  // Copies answered from SettledAnswers (by submit or answer_settled), without a hand-off.
  [[nodiscard]] std::uint64_t settled_answers() const {
    return static_cast<std::uint64_t>(probe_.settled_answers.Value());
  }
  // What the readiness prober last saw (never waits for a store: safe on an io thread).
  [[nodiscard]] ReadyState readiness() const;
  // Runs an API job on one of the API actors (round robin).
  void run_api(ApiJob job);
  // Sends `xs` to `to` (a typed handle: a message its interface does not declare fails to compile),
  // unless the engine is stopping: then nothing is sent and it returns false. Any thread; never
  // blocks. For the extra actors a library outside the core keeps the handle of.
  template <class Handle, class... Ts>
  bool tell(const Handle& to, Ts&&... xs) {
    return in_system(
        [&](caf::actor_system& /*system*/) { caf::anon_send(to, std::forward<Ts>(xs)...); });
  }
  // Requests `xs` of `to` within `timeout` through an asker (actors/asker.hpp): `on_reply` runs
  // with `to`'s typed reply (its parameters are checked against `to`'s interface), or `on_error`
  // with why none came; once, on an actor thread, and neither may block. While the engine stops,
  // `on_error` runs at once (caf::sec::request_receiver_down). Any thread; never blocks.
  template <class Handle, class OnReply, class... Ts>
  void ask(const Handle& to, caf::duration timeout, OnReply on_reply, AskFailedFn on_error,
           Ts... xs) {
    const bool asked = in_system([&](caf::actor_system& system) {
      spawn_asker(system, to, timeout, std::move(on_reply), on_error, std::move(xs)...);
    });
    if (!asked) {
      on_error(caf::make_error(caf::sec::request_receiver_down));
    }
  }
  // Queries the payment's gateway now and applies the answer (POST /api/payments/{no}/sync): the
  // query actor's typed reply (known = the payment exists, the query's run) reaches `answer` on an
  // actor thread, or `failed` hears why none came. Without active query `answer` runs at once:
  // no_channel. Neither may block.
  void sync_payment(SyncJob job, std::function<void(bool known, const QueryRun& run)> answer,
                    AskFailedFn failed);
  // Refunds a discrepancy through its payment's gateway (POST /api/discrepancies/{id}/refund): the
  // refund actor's typed reply reaches `answer` on an actor thread (or `failed` hears why none
  // came), or `answer` runs at once (409 in flight here, 503 too many, 409 when no refund dialect
  // is configured). Neither may block.
  void refund_discrepancy(RefundJob job, std::function<void(const RefundRun& run)> answer,
                          AskFailedFn failed);
  // Creates or closes a payment at its gateway (SPEC §16) on a gateway actor: its typed reply
  // reaches `answer` on an actor thread, or `failed` hears why none came. Without gateway dialects
  // `answer` runs at once (no_gateway). Neither may block.
  void at_gateway(GatewayJob job, std::function<void(const GatewayAnswer& answer)> answer,
                  AskFailedFn failed);
  // Whether the channel's payments are created at a gateway here (POST /api/payments).
  [[nodiscard]] bool creates_at_gateway(domain::Channel channel) const;
  // The gateway calls' probe (null without gateway dialects).
  [[nodiscard]] const GatewayProbe* gateway_probe() const;
  // Runs the channel's bill of a date (SPEC §13) on the bill actor (BillJob says how); nobody waits
  // for its end. Nothing happens when no channel has a bill source or the engine is stopping (a
  // run opened for it then stays for the lease keeper to fail).
  void run_bill(BillJob job);
  // Whether the channel has a bill source here (POST /api/bill-runs: 409 otherwise).
  [[nodiscard]] bool has_bill_source(domain::Channel channel) const;
  // The bill runner (null without a bill source): POST /api/bill-runs opens its runs with it.
  [[nodiscard]] std::shared_ptr<BillRunner> bill_runner() const { return bill_runner_; }
  // Payment actors alive right now.
  [[nodiscard]] std::size_t live_payment_actors() const;
  // Whether a core actor (router, batcher, flusher, a persistence/API actor, the prober, ...) died.
  [[nodiscard]] bool core_actor_died() const { return core_down_->load(); }
  // Writes the duplicate counts answered from memory; true when they are all in PostgreSQL.
  [[nodiscard]] bool flush_duplicates(std::chrono::milliseconds timeout);
  // Makes submit() answer unavailable, waits for the submits in progress, flushes duplicates
  // (for at most 10 s, and so that the rest fits before `deadline`), then aborts every store call
  // still running (the watchdog cuts their sockets; nothing commits after this), stops every
  // actor and waits for them; idempotent. Actors in a connect attempt finish it first (bounded
  // by the connect timeouts).
  void shutdown(std::chrono::steady_clock::time_point deadline);
  void shutdown();

 private:
  // First: the registry outlives every probe and every actor holding one.
  std::unique_ptr<observability::Registry> own_metrics_;
  observability::Registry* metrics_;
  EngineProbe probe_;
  std::shared_ptr<BatcherProbe> batcher_probe_;          // shared with the commit batcher
  std::shared_ptr<persistence::CallWatchdog> watchdog_;  // outlives the actor system
  std::shared_ptr<Readiness> readiness_;
  std::chrono::milliseconds connect_ms_max_;
  // At stop: the bill run in progress ends (failed) and this engine's held runs are failed, before
  // the stores are cut.
  void end_bill_runs(std::chrono::steady_clock::time_point deadline);
  // Spawns the sweeper, event relay, retention actor, reconciler and the extra actors that
  // `settings` turns on.
  void spawn_background(EngineSettings& settings);
  // shutdown()'s last step: an exit to every actor, and every handle dropped.
  void stop_actors();
  // Spawns the gateway actors when a channel has a create/close dialect.
  void spawn_gateways(EngineSettings& settings);
  // Registers the scrape hook that reads the router's, the watchdog's and the relay's figures.
  void watch_scrapes();
  // Spawns the supervisor over every core actor spawned so far.
  void supervise(CoreDownFn on_core_down);
  class Entry;  // counts a submit or memory answer in progress (submitters_)
  // Runs `use` with the actor system unless the engine is stopping (then false); counted like a
  // submit, so shutdown() never resets the system or a handle while `use` runs.
  bool in_system(const std::function<void(caf::actor_system& system)>& use);
  // The memory answer shared by submit() and answer_settled(); the caller holds an Entry and has
  // seen closed_ unset.
  [[nodiscard]] bool settled_copy(const domain::VerifiedCallback& callback);

  caf::actor_system_config config_;
  std::unique_ptr<caf::actor_system> system_;
  std::vector<PersistenceActor> persistence_;
  CommitBatcherActor committer_;
  DuplicateFlusherActor flusher_;
  RouterActor router_;
  HealthActor health_;
  std::vector<ApiActor> api_;
  std::atomic<std::size_t> next_api_{0};
  SweeperActor sweeper_;
  ReconcilerActor reconciler_;
  // The extra actors, by the name the supervisor reports: references without an interface (their
  // library holds the typed handles), to monitor and stop them.
  std::vector<std::pair<std::string, caf::strong_actor_ptr>> extras_;
  QueryActor query_;
  std::vector<GatewayActor> gateways_;
  std::atomic<std::size_t> next_gateway_{0};
  std::shared_ptr<PaymentGatewayCaller> gateway_caller_;
  bool gateway_creates_ = false;  // GatewaySettings::create_enabled
  RefundActor refund_;
  std::shared_ptr<DiscrepancyRefunder> refunder_;
  std::shared_ptr<PaymentQuerier> querier_;
  std::shared_ptr<BillRunner> bill_runner_;
  std::unique_ptr<BillLeaseKeeper> bill_lease_;
  BillActor bill_;
  EventRelayActor event_relay_;
  RetentionActor retention_;
  SupervisorActor supervisor_;
  std::shared_ptr<std::atomic<bool>> core_down_ = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<RelayStats> relay_stats_;
  std::shared_ptr<std::atomic<std::size_t>> live_gauge_;
  std::shared_ptr<std::atomic<bool>> memory_answers_;
  std::shared_ptr<SettledAnswers> settled_;  // null when memory duplicates are off
  std::shared_ptr<DuplicateLedger> ledger_;
  std::atomic<bool> closed_{false};  // shutdown() has begun: submit() answers unavailable
  std::atomic<int> submitters_{0};   // submit() calls in progress
  // Last: unregistered before anything it reads (the watchdog, the relay's stats) goes.
  observability::ScrapeHook scrape_hook_;
};

}  // namespace seatflow::actors

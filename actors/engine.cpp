// Wires the actor system: scheduler policy, detached persistence actors, router, health actor.
#include "actors/engine.hpp"

#include <algorithm>
#include <cassert>
#include <thread>

#include "actors/log.hpp"

namespace seatflow::actors {
namespace {

// The final duplicate flush waits at most this long (less when the stop deadline is nearer).
constexpr auto kFlushTimeoutMax = std::chrono::milliseconds(10'000);

}  // namespace

Engine::Engine(EngineSettings settings)
    : own_metrics_(settings.metrics == nullptr ? std::make_unique<observability::Registry>()
                                               : nullptr),
      metrics_(settings.metrics != nullptr ? settings.metrics : own_metrics_.get()),
      probe_(*metrics_),
      batcher_probe_(std::make_shared<BatcherProbe>(*metrics_)),
      watchdog_(std::make_shared<persistence::CallWatchdog>()),
      readiness_(
          std::make_shared<Readiness>(std::chrono::milliseconds(settings.prober.probe_ms_max))),
      connect_ms_max_(std::max(settings.store.pg.connect_ms_max, settings.store.redis_timeout_ms)),
      relay_stats_(std::make_shared<RelayStats>()),
      live_gauge_(std::make_shared<std::atomic<std::size_t>>(0)) {
  // Chosen by measurement (bench/tune.sh, docs/BENCHMARKS.md): on 2 cores a sharing scheduler is
  // steadier than work stealing.
  config_.set("scheduler.policy", settings.scheduler_policy == "stealing" ? caf::atom("stealing")
                                                                          : caf::atom("sharing"));
  config_.set("scheduler.max-threads", settings.scheduler_threads);
  config_.set("logger.verbosity", caf::atom("quiet"));
  system_ = std::make_unique<caf::actor_system>(config_);
  settings.store.watchdog = watchdog_;
  persistence_.reserve(settings.pg_pool_size);
  for (std::size_t i = 0; i < settings.pg_pool_size; ++i) {
    persistence_.push_back(system_->spawn<caf::detached>(persistence_actor, settings.store));
  }
  committer_ = system_->spawn(commit_batcher, persistence_, settings.batcher, batcher_probe_);
  PaymentActorLinks links;
  links.committer = committer_;
  memory_answers_ = std::make_shared<std::atomic<bool>>(true);
  links.memory_answers = memory_answers_;
  if (settings.memory_duplicates) {
    ledger_ = std::make_shared<DuplicateLedger>(settings.flusher.entries_max, memory_answers_);
    settled_ = std::make_shared<SettledAnswers>();
    flusher_ =
        system_->spawn(duplicate_flusher, persistence_, settings.flusher, memory_answers_, ledger_);
    links.flusher = flusher_;
    links.ledger = ledger_;
    links.settled = settled_;
  }
  router_ = system_->spawn(router_actor, links, settings.router, live_gauge_);
  health_ =
      system_->spawn<caf::detached>(health_actor, settings.store, settings.prober, readiness_);
  if (!settings.query_dialects.empty()) {
    querier_ = std::make_shared<PaymentQuerier>(
        settings.query_dialects,
        std::make_unique<net::HttpClient>(settings.query_client, settings.query_ca_file),
        [this](domain::VerifiedCallback callback, ReplyFn reply) {
          submit(std::move(callback), std::move(reply));
        },
        std::chrono::milliseconds(settings.query_apply_timeout_ms), *metrics_);
    query_ = system_->spawn<caf::detached>(query_actor, settings.store, settings.query, querier_);
  }
  spawn_gateways(settings);
  if (!settings.refund_dialects.empty()) {
    refunder_ = std::make_shared<DiscrepancyRefunder>(
        settings.refund_dialects,
        std::make_unique<net::HttpClient>(settings.query_client, settings.query_ca_file),
        *metrics_);
    refund_ = system_->spawn<caf::detached>(refund_actor, settings.store, refunder_,
                                            settings.auto_refund);
  }
  // New payments get a schedule row only when the scheduler will read it.
  const std::uint32_t query_first_step_ms =
      querier_ && settings.query.enabled && !settings.query.schedule_ms.empty()
          ? settings.query.schedule_ms.front()
          : 0;
  for (std::size_t i = 0; i < std::max<std::size_t>(1, settings.api_pool_size); ++i) {
    api_.push_back(system_->spawn<caf::detached>(api_actor, settings.store, query_first_step_ms));
  }
  spawn_background(settings);
  supervise(std::move(settings.on_core_down));
  watch_scrapes();
}

void Engine::spawn_gateways(EngineSettings& settings) {
  if (settings.payment_dialects.empty()) {
    return;
  }
  gateway_creates_ = settings.gateway.create_enabled;
  gateway_caller_ = std::make_shared<PaymentGatewayCaller>(
      settings.payment_dialects,
      std::make_unique<net::HttpClient>(settings.query_client, settings.query_ca_file), querier_,
      *metrics_);
  for (std::size_t i = 0; i < std::max<std::size_t>(1, settings.gateway.callers); ++i) {
    gateways_.push_back(system_->spawn<caf::detached>(gateway_actor, settings.store,
                                                      settings.gateway, gateway_caller_));
  }
}

void Engine::spawn_background(EngineSettings& settings) {
  if (settings.sweeper.enabled) {
    if (!settings.query.schedule_ms.empty()) {
      settings.sweeper.query_postpone_ms = settings.query.schedule_ms.front();
    }
    settings.sweeper.close_grace_ms = settings.gateway.close_grace_ms;
    settings.sweeper.rate_per_s = settings.query.rate_per_s;
    sweeper_ = system_->spawn<caf::detached>(
        sweeper_actor, settings.store, settings.sweeper,
        SweeperGateways{settings.query.enabled ? querier_ : nullptr,
                        settings.gateway.close_enabled ? gateway_caller_ : nullptr});
  }
  if (settings.event_relay.enabled) {
    event_relay_ = system_->spawn<caf::detached>(event_relay_actor, settings.store,
                                                 settings.event_relay, relay_stats_);
  }
  if (settings.retention.enabled) {
    retention_ = system_->spawn<caf::detached>(retention_actor, settings.store, settings.retention);
  }
  if (settings.reconciler.interval_ms > 0) {
    reconciler_ =
        system_->spawn<caf::detached>(reconciler_actor, settings.store, settings.reconciler);
  }
  if (!settings.bill_dialects.empty()) {
    bill_runner_ = std::make_shared<BillRunner>(
        settings.bill_dialects, settings.bill, settings.query_client, settings.query_ca_file,
        [this](domain::VerifiedCallback callback, ReplyFn reply) {
          submit(std::move(callback), std::move(reply));
        },
        *metrics_);
    // Before any run opens here: the runs this engine held when it last stopped are failed.
    if (!settings.bill.holder.empty()) {
      bill_lease_ = std::make_unique<BillLeaseKeeper>(
          settings.store.pg_dsn, settings.store.pg, settings.bill.holder, settings.bill.lease_ms,
          [runner = bill_runner_] { return runner->active(); });
    }
    bill_ = system_->spawn<caf::detached>(bill_actor, settings.store, bill_runner_);
  }
  for (auto& extra : settings.extra_actors) {
    assert(std::none_of(extras_.begin(), extras_.end(),
                        [&extra](const auto& known) { return known.first == extra.name; }) &&
           "an extra actor's name is given once");
    extras_.emplace_back(extra.name, extra.spawn(*system_));
  }
}

void Engine::watch_scrapes() {
  // The gauges and counters kept by the router, the watchdog and the relay, read at each scrape.
  scrape_hook_ = metrics_->on_scrape([this] {
    probe_.payment_actors.Set(static_cast<double>(live_payment_actors()));
    observability::sync_counter(probe_.store_deadline_cuts, watchdog_->deadline_cuts());
    observability::sync_counter(probe_.events_published,
                                relay_stats_->published_total.load(std::memory_order_relaxed));
    observability::sync_counter(probe_.event_slots_created,
                                relay_stats_->slots_created_total.load(std::memory_order_relaxed));
    observability::sync_counter(
        probe_.event_streams_taken_back,
        relay_stats_->streams_taken_back_total.load(std::memory_order_relaxed));
    probe_.event_relay_lag.Set(
        static_cast<double>(relay_stats_->lag_ms.load(std::memory_order_relaxed)) / 1000.0);
    probe_.event_slot_lag_bytes.Set(
        static_cast<double>(relay_stats_->lag_bytes.load(std::memory_order_relaxed)));
    const auto slot = relay_stats_->slot.load(std::memory_order_relaxed);
    probe_.event_slot_ok.Set(slot == RelayStats::Slot::ok ? 1 : 0);
    probe_.event_slot_missing.Set(slot == RelayStats::Slot::missing ? 1 : 0);
    probe_.event_slot_lost.Set(slot == RelayStats::Slot::lost ? 1 : 0);
  });
}

void Engine::supervise(CoreDownFn on_core_down) {
  std::vector<SupervisedActor> watched;
  // Every actor that runs; the optional ones are null when they are off.
  const auto watch = [&watched](const auto& actor, std::string name) {
    if (actor) {
      watched.emplace_back(actor, std::move(name));
    }
  };
  watch(router_, "router");
  watch(committer_, "commit_batcher");
  watch(health_, "readiness_prober");
  for (std::size_t i = 0; i < persistence_.size(); ++i) {
    watch(persistence_[i], "persistence-" + std::to_string(i));
  }
  for (std::size_t i = 0; i < api_.size(); ++i) {
    watch(api_[i], "api-" + std::to_string(i));
  }
  for (std::size_t i = 0; i < gateways_.size(); ++i) {
    watch(gateways_[i], "gateway-" + std::to_string(i));
  }
  watch(flusher_, "duplicate_flusher");
  watch(sweeper_, "sweeper");
  watch(reconciler_, "reconciler");
  watch(event_relay_, "event_relay");
  watch(retention_, "retention");
  watch(query_, "query_scheduler");
  watch(refund_, "refunder");
  watch(bill_, "bill");
  for (const auto& [name, actor] : extras_) {
    watch(actor, name);
  }
  supervisor_ = system_->spawn(supervisor_actor, std::move(watched),
                               [down = core_down_, on_core_down = std::move(on_core_down)](
                                   const std::string& actor, const std::string& reason) {
                                 down->store(true);
                                 if (on_core_down) {
                                   on_core_down(actor, reason);
                                 }
                               });
}

void Engine::run_api(ApiJob job) {
  const auto index = next_api_.fetch_add(1, std::memory_order_relaxed) % api_.size();
  caf::anon_send(api_[index], std::move(job));
}

void Engine::sync_payment(SyncJob job, std::function<void(bool known, const QueryRun& run)> answer,
                          AskFailedFn failed) {
  if (!query_) {
    answer(true, QueryRun{QueryResult::no_channel, "active query is not configured", {}});
    return;
  }
  // No deadline of its own: the query's gateway call and store calls have theirs.
  ask(
      query_, caf::infinite,
      [answer = std::move(answer)](bool known, const QueryRun& run) { answer(known, run); },
      std::move(failed), std::move(job));
}

void Engine::at_gateway(GatewayJob job, std::function<void(const GatewayAnswer& answer)> answer,
                        AskFailedFn failed) {
  if (gateways_.empty()) {
    answer(GatewayAnswer{GatewayAnswer::Subject::no_gateway, {}});
    return;
  }
  const auto index = next_gateway_.fetch_add(1, std::memory_order_relaxed) % gateways_.size();
  // No deadline of its own: the gateway call and the store calls have theirs.
  ask(
      gateways_[index], caf::infinite,
      [answer = std::move(answer)](const GatewayAnswer& reply) { answer(reply); },
      std::move(failed), std::move(job));
}

bool Engine::creates_at_gateway(domain::Channel channel) const {
  return gateway_creates_ && gateway_caller_ && gateway_caller_->has_dialect(channel);
}

const GatewayProbe* Engine::gateway_probe() const {
  return gateway_caller_ ? &gateway_caller_->probe() : nullptr;
}

void Engine::refund_discrepancy(RefundJob job, std::function<void(const RefundRun& run)> answer,
                                AskFailedFn failed) {
  if (!refund_) {
    answer({RefundStatus::conflict,
            "not refundable here: no channel has a refund gateway configured (standard "
            "payments are never refundable through SeatFlow)",
            {},
            {}});
    return;
  }
  switch (refunder_->claim(job.discrepancy_id)) {
    case DiscrepancyRefunder::Claim::taken:
      // No deadline of its own: the refund's gateway call and store calls have theirs.
      ask(
          refund_, caf::infinite,
          [answer = std::move(answer)](const RefundRun& run) { answer(run); }, std::move(failed),
          std::move(job));
      return;
    case DiscrepancyRefunder::Claim::in_flight:
      answer({RefundStatus::conflict, "a refund of this discrepancy is in flight", {}, {}});
      return;
    case DiscrepancyRefunder::Claim::overloaded:
      answer({RefundStatus::unavailable, "overloaded: too many refunds at once", {}, {}});
      return;
  }
}

Engine::~Engine() {
  shutdown();
}

// Announces a submit or memory answer to shutdown(), which sets closed_ before it waits for
// submitters_ to drain: a caller either sees closed_ or is waited for (both sequentially
// consistent), so the final flush finds every note it made and no actor handle is read while it
// is reset.
class Engine::Entry {
 public:
  explicit Entry(std::atomic<int>& count) : count_(count) { count_.fetch_add(1); }
  ~Entry() { count_.fetch_sub(1); }
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;

 private:
  std::atomic<int>& count_;
};

bool Engine::settled_copy(const domain::VerifiedCallback& callback) {
  // A storm's copies of a committed callback cost a lookup here instead of two actor hand-offs and
  // a post back (docs/BENCHMARKS.md). The count is in the ledger before the reply leaves.
  if (!settled_ || !flusher_ || !memory_answers_->load(std::memory_order_relaxed) ||
      !settled_->settled(callback.payment_no, callback.callback_id, callback.payload_sha256)) {
    return false;
  }
  note_duplicates(*ledger_, flusher_, callback, 1);
  probe_.settled_answers.Increment();
  return true;
}

bool Engine::answer_settled(const domain::VerifiedCallback& callback) {
  const Entry entry(submitters_);
  return !closed_.load() && settled_copy(callback);
}

void Engine::submit(domain::VerifiedCallback callback, ReplyFn reply) {
  const Entry entry(submitters_);
  if (closed_.load()) {
    reply({domain::CallbackResult::unavailable, "engine stopping"});
    return;
  }
  if (settled_copy(callback)) {
    reply({domain::CallbackResult::duplicate, {}});
    return;
  }
  caf::anon_send(router_, CallbackEnvelope{std::move(callback), std::move(reply),
                                           std::chrono::steady_clock::now()});
}

void Engine::run_bill(BillJob job) {
  // The handle is read inside in_system, so shutdown() never resets it while it is read here.
  (void)in_system([this, &job](caf::actor_system& /*system*/) {
    if (bill_) {
      // Nobody waits for the run's end: its reply goes to no one.
      caf::anon_send(bill_, std::move(job));
    }
  });
}

bool Engine::has_bill_source(domain::Channel channel) const {
  return bill_runner_ && bill_runner_->has_dialect(channel);
}

bool Engine::in_system(const std::function<void(caf::actor_system& system)>& use) {
  const Entry entry(submitters_);
  if (closed_.load()) {
    return false;
  }
  use(*system_);
  return true;
}

ReadyState Engine::readiness() const {
  auto state = readiness_->read(Readiness::Clock::now());
  // The stores answer, but the events of committed moves cannot leave: an operator must act.
  const auto slot = relay_stats_->slot.load(std::memory_order_relaxed);
  if (state.ready && slot != RelayStats::Slot::ok) {
    return {false, slot == RelayStats::Slot::lost
                       ? "event slot invalidated (wal_status=lost): events were dropped"
                       : "event slot missing: run seatflow migrate"};
  }
  return state;
}

std::size_t Engine::live_payment_actors() const {
  return live_gauge_->load(std::memory_order_relaxed);
}

bool Engine::flush_duplicates(std::chrono::milliseconds timeout) {
  if (!system_ || !flusher_) {
    return true;
  }
  caf::scoped_actor self{*system_};
  bool flushed = false;
  self->request(flusher_, timeout, flush_atom::value, true)
      .receive([&](bool ok) { flushed = ok; }, [&](const caf::error&) { flushed = false; });
  return flushed;
}

void Engine::shutdown() {
  shutdown(std::chrono::steady_clock::now() + kFlushTimeoutMax + connect_ms_max_);
}

void Engine::end_bill_runs(std::chrono::steady_clock::time_point deadline) {
  // The bill run in progress writes its end (failed, its items deleted) before the stores are
  // cut, within half of what is left; then whatever this engine still holds is failed.
  if (!bill_runner_) {
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  const auto bill_left =
      std::max(std::chrono::steady_clock::duration::zero(), (deadline - connect_ms_max_ - now) / 2);
  if (!bill_runner_->wait_idle(now + bill_left)) {
    logger().warn("event=bill_run_unfinished_at_stop");
  }
  if (bill_lease_) {
    bill_lease_->release();
  }
}

void Engine::shutdown(std::chrono::steady_clock::time_point deadline) {
  if (!system_) {
    return;
  }
  // From here submit() answers 503 itself; the submits already inside finish first (they never
  // block), so the flush below sees every duplicate they noted and no actor handle is read while
  // it is reset.
  closed_.store(true);
  // A bill run in progress ends at its next rest instead of holding the stop for its whole load.
  if (bill_runner_) {
    bill_runner_->request_stop();
  }
  while (submitters_.load() != 0) {
    std::this_thread::yield();
  }
  // An actor may be inside a connect attempt when the calls are aborted: leave it that long.
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now() - connect_ms_max_);
  const auto flush_timeout = std::clamp(left, std::chrono::milliseconds(0), kFlushTimeoutMax);
  if (flusher_ && (flush_timeout.count() == 0 || !flush_duplicates(flush_timeout))) {
    logger().warn(
        "event=duplicate_flush_incomplete message=\"some duplicate_count increments "
        "answered from memory were not written\"");
  }
  end_bill_runs(deadline);
  // The exits below are the stop's own: the supervisor goes first so it reports none of them.
  caf::anon_send_exit(supervisor_, caf::exit_reason::user_shutdown);
  supervisor_ = nullptr;
  // Nothing may commit from here on: a callback not committed now is never ACKed (its reply is
  // dropped with its actor), and a blocked call returns instead of holding the stop.
  watchdog_->abort_all();
  stop_actors();
  system_.reset();
}

void Engine::stop_actors() {
  // The router stops its payment actors when it exits. Callers drain in-flight
  // callbacks before this (the HTTP server stops accepting first); the reply of whatever is left
  // is dropped uncalled (the HTTP layer answers such a drop 503) and the gateway retries it.
  // Each exit is sent only to an actor that runs (anon_send_exit skips a null handle).
  const auto stop = [](const auto& actor) {
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  };
  stop(router_);
  stop(committer_);
  stop(flusher_);
  stop(health_);
  std::for_each(persistence_.begin(), persistence_.end(), stop);
  std::for_each(api_.begin(), api_.end(), stop);
  std::for_each(gateways_.begin(), gateways_.end(), stop);
  stop(sweeper_);
  stop(reconciler_);
  stop(event_relay_);
  stop(retention_);
  stop(query_);
  stop(refund_);
  stop(bill_);
  for (const auto& extra : extras_) {
    stop(extra.second);
  }
  router_ = nullptr;
  committer_ = nullptr;
  flusher_ = nullptr;
  health_ = nullptr;
  sweeper_ = nullptr;
  reconciler_ = nullptr;
  event_relay_ = nullptr;
  retention_ = nullptr;
  query_ = nullptr;
  refund_ = nullptr;
  bill_ = nullptr;
  persistence_.clear();
  api_.clear();
  gateways_.clear();
  extras_.clear();
}

}  // namespace seatflow::actors

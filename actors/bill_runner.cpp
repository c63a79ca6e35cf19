// One bill run: the day's bounds, the dialect's requests under the bill client's limits, the rows
// into the store's COPY, the paced match, the repairs through the pipeline, the counts.
#include "actors/bill_runner.hpp"

#include <algorithm>
#include <cassert>
#include <future>

#include <nlohmann/json.hpp>

#include "actors/log.hpp"
#include "codec/digest.hpp"
#include "domain/clock.hpp"

namespace seatflow::actors {
namespace {

namespace outcome = persistence::bill_outcome;

// The bill's rows into the run's COPY, field by field: nothing is kept here. Every kBillPaceRows
// rows the run rests (the parse and the COPY are much of a load's work).
class StoreSink final : public channels::BillRowSink {
 public:
  StoreSink(persistence::BillLoad& load, BillPacer& pacer) : load_(load), pacer_(pacer) {}
  [[nodiscard]] domain::Result<void> row(const channels::BillRow& row) override {
    if (++since_rest_ == kBillPaceRows) {
      since_rest_ = 0;
      if (!pacer_.rest(std::chrono::steady_clock::now() - slice_)) {
        return persistence::refused(persistence::errc::deadline_exceeded, "the run was stopped");
      }
      slice_ = std::chrono::steady_clock::now();
    }
    return load_.row({channels::to_string(row.kind), row.trade_no, row.payment_no, row.refund_no,
                      row.amount_cents, row.fee_cents, row.completed_at_ms});
  }

 private:
  persistence::BillLoad& load_;
  BillPacer& pacer_;
  std::size_t since_rest_ = 0;
  std::chrono::steady_clock::time_point slice_ = std::chrono::steady_clock::now();
};

// An answer's body handed to the dialect's reader as it arrives (a dialect that reads so): the
// load is opened with the answer's head, as the runner opens it with a whole answer.
class StreamedBody final : public net::BodySink {
 public:
  StreamedBody(persistence::BillStore& store, std::unique_ptr<persistence::BillLoad>& load,
               BillPacer& pacer, const channels::BillDialect& dialect, const channels::BillDay& day,
               const channels::BillLimits& limits, channels::BillCursor& cursor)
      : store_(store),
        load_(load),
        pacer_(pacer),
        dialect_(dialect),
        day_(day),
        limits_(limits),
        cursor_(cursor) {}

  bool begin(const net::Response& head) override {
    if (!load_) {
      auto opened = store_.load();
      if (!opened.ok()) {
        failure_ = opened.failure();
        return false;
      }
      load_ = std::move(opened).value();
    }
    sink_.emplace(*load_, pacer_);
    reader_ = dialect_.body_reader(day_, limits_, cursor_, head, *sink_);
    return reader_ != nullptr;
  }

  bool piece(std::string_view bytes) override {
    auto read = reader_->piece(bytes);
    if (!read.ok()) {
      failure_ = std::move(read).failure();
      return false;
    }
    return true;
  }

  [[nodiscard]] bool streamed() const { return reader_ != nullptr; }
  [[nodiscard]] channels::BillBodyReader& reader() { return *reader_; }
  // Why the body stopped early (the bill not whole, the store), or why the load did not open.
  [[nodiscard]] const std::optional<domain::Failure>& failure() const { return failure_; }

 private:
  persistence::BillStore& store_;
  std::unique_ptr<persistence::BillLoad>& load_;
  BillPacer& pacer_;
  const channels::BillDialect& dialect_;
  const channels::BillDay& day_;
  const channels::BillLimits& limits_;
  channels::BillCursor& cursor_;
  std::optional<StoreSink> sink_;
  std::unique_ptr<channels::BillBodyReader> reader_;
  std::optional<domain::Failure> failure_;
};

constexpr std::string_view kStopped = "the engine stopped during the run";

bool from_store(const domain::Failure& failure) {
  return failure.code.category() == persistence::error_category();
}

domain::VerifiedCallback repair_callback(domain::Channel channel,
                                         const persistence::BillRepair& row) {
  domain::VerifiedCallback callback;
  callback.callback_id = channels::bill_callback_id(channel, row.trade_no);
  callback.payment_no = row.payment_no;
  callback.channel = channel;
  callback.kind = domain::CallbackKind::success;
  callback.amount_cents = row.amount_cents;
  callback.channel_trade_no = row.trade_no;
  callback.payload_sha256 = codec::business_digest(callback);
  return callback;
}

// The item's outcome for the pipeline's answer.
std::string_view repair_outcome(const domain::CallbackOutcome& answer) {
  switch (answer.result) {
    case domain::CallbackResult::applied:
    case domain::CallbackResult::duplicate:
      return outcome::kRepaired;
    case domain::CallbackResult::ignored:
      // Paid in the meantime (a late callback, a query): the books agree now.
      return outcome::kMatched;
    case domain::CallbackResult::discrepancy:
      return outcome::kPaidAfterCancel;
    default:
      return outcome::kRepairFailed;
  }
}

}  // namespace

struct BillRunner::Loaded {
  std::int64_t rows = 0;
  std::string sha256;
};

BillProbe::BillProbe(observability::Registry& registry) {
  auto& runs = registry.counter("seatflow_bill_runs_total",
                                "Bill reconciliation runs finished, by channel and state.");
  auto& items = registry.counter("seatflow_bill_items_total",
                                 "Bill items of finished runs, by channel and outcome.");
  for (std::size_t c = 0; c < domain::kChannelCount; ++c) {
    const std::string channel(domain::to_string(static_cast<domain::Channel>(c)));
    for (std::size_t s = 0; s < kStates.size(); ++s) {
      runs_[c][s] =
          &runs.Add({{"channel", channel}, {"state", std::string(domain::to_string(kStates[s]))}});
    }
    for (const auto name : persistence::bill_outcomes()) {
      items_[c].push_back(&items.Add({{"channel", channel}, {"outcome", std::string(name)}}));
    }
  }
}

void BillProbe::count(const persistence::BillRunRow& run) {
  const auto channel = domain::parse_channel(run.channel);
  assert(channel && "a run's channel is one SeatFlow speaks");
  const auto c = static_cast<std::size_t>(*channel);
  for (std::size_t s = 0; s < kStates.size(); ++s) {
    if (domain::to_string(kStates[s]) == run.state) {
      runs_[c][s]->Increment();
    }
  }
  const auto counts = nlohmann::json::parse(run.counts, nullptr, false);
  const auto& names = persistence::bill_outcomes();
  for (std::size_t o = 0; o < names.size() && counts.is_object(); ++o) {
    const auto it = counts.find(names[o]);
    if (it != counts.end() && it->is_number_integer()) {
      items_[c][o]->Increment(static_cast<double>(it->get<std::int64_t>()));
    }
  }
}

std::uint64_t BillProbe::runs(domain::Channel channel, std::string_view state) const {
  for (std::size_t s = 0; s < kStates.size(); ++s) {
    if (domain::to_string(kStates[s]) == state) {
      return static_cast<std::uint64_t>(runs_[static_cast<std::size_t>(channel)][s]->Value());
    }
  }
  return 0;
}

std::uint64_t BillProbe::items(domain::Channel channel, std::string_view outcome_name) const {
  const auto& names = persistence::bill_outcomes();
  for (std::size_t o = 0; o < names.size(); ++o) {
    if (names[o] == outcome_name) {
      return static_cast<std::uint64_t>(items_[static_cast<std::size_t>(channel)][o]->Value());
    }
  }
  return 0;
}

BillRunner::BillRunner(const std::vector<std::shared_ptr<const channels::BillDialect>>& dialects,
                       BillSettings settings, net::ClientLimits client, const std::string& ca_file,
                       Submit submit, observability::Registry& metrics)
    : settings_(std::move(settings)),
      client_(net::ClientLimits{client.connect_timeout_ms, settings_.fetch_timeout_ms,
                                std::min(settings_.limits.bytes_max, net::kBillResponseBytesMax)},
              ca_file, net::kBillBounds),
      submit_(std::move(submit)),
      probe_(metrics) {
  for (const auto& dialect : dialects) {
    dialects_[static_cast<std::size_t>(dialect->channel())] = dialect;
  }
}

bool BillRunner::has_dialect(domain::Channel channel) const {
  return dialects_[static_cast<std::size_t>(channel)] != nullptr;
}

std::vector<domain::Channel> BillRunner::channels() const {
  std::vector<domain::Channel> out;
  for (std::size_t c = 0; c < domain::kChannelCount; ++c) {
    if (dialects_[c]) {
      out.push_back(static_cast<domain::Channel>(c));
    }
  }
  return out;
}

std::string BillRunner::zone_of(domain::Channel channel) const {
  const auto& dialect = dialects_[static_cast<std::size_t>(channel)];
  return dialect && !dialect->bill_zone().empty() ? std::string(dialect->bill_zone())
                                                  : settings_.timezone;
}

BillRunResult BillRunner::open(persistence::BillStore& store, domain::Channel channel,
                               const std::string& date) const {
  if (!has_dialect(channel)) {
    return {BillEnd::no_channel, {}, "no bill source is configured for this channel"};
  }
  if (!persistence::valid_bill_date(date)) {
    return {BillEnd::refused, {}, "the date must be a calendar day YYYY-MM-DD"};
  }
  // A day still going on has a partial bill: every payment it lacks would be missing_at_gateway.
  const auto zone = zone_of(channel);
  const auto end = store.day_end(date, zone, settings_.edge_ms);
  if (!end.ok()) {
    return {end.error() == persistence::errc::conflict ? BillEnd::refused : BillEnd::store_error,
            {},
            end.detail()};
  }
  if (!end.value().ended) {
    return {BillEnd::refused,
            {},
            "the bill day " + date + " has not ended: it can be reconciled from " +
                end.value().ends_at + " (its end in " + zone + " plus SEATFLOW_BILL_EDGE_MS)"};
  }
  auto opened = store.open(std::string(domain::to_string(channel)), date, settings_.lease_ms,
                           settings_.holder);
  if (!opened.ok()) {
    return {opened.error() == persistence::errc::conflict ? BillEnd::refused : BillEnd::store_error,
            {},
            opened.detail()};
  }
  ++active_;
  return {BillEnd::done, std::move(opened).value(), {}};
}

bool BillRunner::wait_idle(std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(executing_mutex_);
  return executing_done_.wait_until(lock, deadline, [this] { return executing_ == 0; });
}

BillRunResult BillRunner::execute(persistence::BillStore& store,
                                  const persistence::BillRunRow& run) {
  // Counted from here to the run's end written (finish), so a stop waits for it (wait_idle).
  {
    const std::lock_guard lock(executing_mutex_);
    ++executing_;
  }
  struct Executing {
    BillRunner& runner;
    ~Executing() {
      {
        const std::lock_guard lock(runner.executing_mutex_);
        --runner.executing_;
      }
      runner.executing_done_.notify_all();
    }
  } const executing{*this};
  const auto channel = domain::parse_channel(run.channel);
  assert(channel && "a run's channel is one SeatFlow speaks");
  Loaded loaded;
  const auto& dialect = dialects_[static_cast<std::size_t>(*channel)];
  if (!dialect) {
    return finish(store, run, BillEnd::no_channel, domain::BillRunState::failed,
                  "no bill source is configured for this channel", loaded);
  }
  auto result = load(store, run, *dialect, loaded);
  if (result.end != BillEnd::done && stopping_.load()) {
    result = {BillEnd::failed, {}, std::string(kStopped)};
  }
  if (result.end != BillEnd::done) {
    const auto state = result.end == BillEnd::not_ready ? domain::BillRunState::not_ready
                                                        : domain::BillRunState::failed;
    return finish(store, run, result.end, state, result.detail, Loaded{});
  }
  repair(store, run, *channel);
  return finish(store, run, BillEnd::done, domain::BillRunState::done, {}, loaded);
}

BillRunResult BillRunner::load(persistence::BillStore& store, const persistence::BillRunRow& run,
                               const channels::BillDialect& dialect, Loaded& loaded) {
  const auto zone = zone_of(dialect.channel());
  const auto bounds = store.day_bounds(run.bill_date, zone);
  if (!bounds.ok()) {
    return {bounds.error() == persistence::errc::conflict ? BillEnd::failed : BillEnd::store_error,
            {},
            bounds.detail()};
  }
  const channels::BillDay day{run.bill_date, bounds.value().first, bounds.value().second};
  const auto started = std::chrono::steady_clock::now();
  if (!lower_this_thread_priority()) {
    logger().warn("event=bill_priority_unchanged run_id={}", run.id);
  }
  BillPacer pacer(settings_.work_share_pct, stopping_);
  std::unique_ptr<persistence::BillLoad> load;  // rolled back unless matched below
  if (auto fetched = fetch(store, run, dialect, day, pacer, load, loaded);
      fetched.end != BillEnd::done) {
    return fetched;
  }
  const auto fetched_at = std::chrono::steady_clock::now();  // downloaded, parsed and staged
  const persistence::BillMatchScope scope{run.id,
                                          run.channel,
                                          run.bill_date,
                                          day.start_ms,
                                          day.end_ms,
                                          settings_.edge_ms,
                                          settings_.item_chunk_rows};
  auto matched = load->match(
      scope, [&pacer](std::chrono::steady_clock::duration worked) { return pacer.rest(worked); });
  if (!matched.ok()) {
    return {BillEnd::store_error, {}, matched.detail()};
  }
  const auto& counts = matched.value();
  const auto ms = [](auto span) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(span).count();
  };
  logger().info(
      "event=bill_run_loaded run_id={} rows={} items={} chunks={} record_chunks={} elapsed_ms={} "
      "fetched_ms={} prepare_ms={} writes_ms={} records_ms={} rested_ms={} busy_rests={} "
      "work_share_pct={}",
      run.id, counts.rows, counts.items, counts.chunks, counts.record_chunks,
      ms(std::chrono::steady_clock::now() - started), ms(fetched_at - started), ms(counts.prepare),
      ms(counts.writes), ms(counts.records), ms(pacer.rested()), pacer.busy_rests(),
      settings_.work_share_pct);
  return {BillEnd::done, {}, {}};
}

BillRunResult BillRunner::fetch(persistence::BillStore& store, const persistence::BillRunRow& run,
                                const channels::BillDialect& dialect, const channels::BillDay& day,
                                BillPacer& pacer, std::unique_ptr<persistence::BillLoad>& load,
                                Loaded& loaded) {
  channels::BillCursor cursor;
  auto request = dialect.bill_request(day, domain::unix_time_ms());
  for (std::size_t step = 0;; ++step) {
    if (stopping_.load()) {
      return {BillEnd::failed, {}, std::string(kStopped)};
    }
    if (step == kBillStepsMax) {
      return {BillEnd::failed, {}, "the bill took more requests than a bill may"};
    }
    StreamedBody streamed(store, load, pacer, dialect, day, settings_.limits, cursor);
    const auto response = client_.send(request, &stopping_, &streamed);
    if (stopping_.load()) {
      return {BillEnd::failed, {}, std::string(kStopped)};
    }
    if (const auto& failure = streamed.failure()) {
      return {from_store(*failure) ? BillEnd::store_error : BillEnd::failed, {}, failure->detail};
    }
    if (!response.ok()) {
      return {BillEnd::failed, {}, "gateway unreachable: " + response.detail()};
    }
    if (!load) {
      auto opened = store.load();
      if (!opened.ok()) {
        return {BillEnd::store_error, {}, opened.detail()};
      }
      load = std::move(opened).value();
    }
    auto answer = [&]() -> domain::Result<channels::BillStep> {
      if (streamed.streamed()) {
        ++cursor.step;
        return streamed.reader().finish();
      }
      StoreSink sink(*load, pacer);
      return dialect.step(day, settings_.limits, cursor, response.value(), sink,
                          domain::unix_time_ms());
    }();
    if (!answer.ok()) {
      return {from_store(answer.failure()) ? BillEnd::store_error : BillEnd::failed,
              {},
              answer.detail()};
    }
    auto& next = answer.value();
    if (next.kind == channels::BillStep::Kind::not_ready) {
      return {BillEnd::not_ready, {}, next.detail.empty() ? "the bill is not ready" : next.detail};
    }
    if (next.kind == channels::BillStep::Kind::next) {
      if (!next.next) {
        return {BillEnd::failed, {}, "the dialect asked for a next request without one"};
      }
      request = std::move(*next.next);
      continue;
    }
    loaded.rows = static_cast<std::int64_t>(next.summary.rows);
    loaded.sha256 = next.summary.sha256;
    return {BillEnd::done, {}, {}};
  }
}

void BillRunner::repair(persistence::BillStore& store, const persistence::BillRunRow& run,
                        domain::Channel channel) {
  std::int64_t after = 0;
  const auto batch = std::max<std::size_t>(1, settings_.repairs_inflight_max);
  while (!stopping_.load()) {
    auto page = store.repairs(run.id, after, kBillRepairPage);
    if (!page.ok() || page.value().empty()) {
      return;  // a store failure leaves the rest as `repair`: counted unrepaired, a rerun retries
    }
    const auto& rows = page.value();
    for (std::size_t first = 0; first < rows.size(); first += batch) {
      const auto last = std::min(rows.size(), first + batch);
      std::vector<std::future<domain::CallbackOutcome>> answers;
      for (std::size_t i = first; i < last; ++i) {
        auto promise = std::make_shared<std::promise<domain::CallbackOutcome>>();
        answers.push_back(promise->get_future());
        submit_(repair_callback(channel, rows[i]),
                [promise](const domain::CallbackOutcome& answer) { promise->set_value(answer); });
      }
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(settings_.repair_timeout_ms);
      for (std::size_t i = first; i < last; ++i) {
        auto& future = answers[i - first];
        const auto answer = future.wait_until(deadline) == std::future_status::ready
                                ? future.get()
                                : domain::CallbackOutcome{domain::CallbackResult::unavailable,
                                                          "the pipeline did not answer in time"};
        const auto detail = std::string(domain::to_string(answer.result)) +
                            (answer.detail.empty() ? "" : ": " + answer.detail);
        if (!store.repaired(run.id, rows[i].seq, repair_outcome(answer), detail).ok()) {
          logger().warn("event=bill_repair_unrecorded run_id={} seq={}", run.id, rows[i].seq);
        }
      }
    }
    after = rows.back().seq;
  }
}

BillRunResult BillRunner::finish(persistence::BillStore& store, const persistence::BillRunRow& run,
                                 BillEnd end, domain::BillRunState state, const std::string& reason,
                                 const Loaded& loaded) {
  auto finished = store.finish(run.id, state, reason, loaded.rows, loaded.sha256);
  if (active_.load() > 0) {
    --active_;
  }
  if (!finished.ok()) {
    logger().warn("event=bill_run_unfinished run_id={} channel={} bill_date={} detail={}", run.id,
                  run.channel, run.bill_date, quoted_value(finished.detail()));
    return {BillEnd::store_error, run, finished.detail()};
  }
  auto& row = finished.value();
  probe_.count(row);
  logger().info(
      "event=bill_run_finished run_id={} channel={} bill_date={} state={} rows={} matched={} "
      "repaired={} discrepancies={} fees_cents={} reason={}",
      row.id, row.channel, row.bill_date, row.state, row.rows, row.matched, row.repaired,
      row.discrepancies, row.fees_cents, quoted_value(reason));
  return {end, std::move(row), reason};
}

}  // namespace seatflow::actors

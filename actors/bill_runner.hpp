// Runs one bill reconciliation (SPEC §13): opens the run under its lease, computes the bill day in
// PostgreSQL, sends the channel dialect's requests with the bill-sized HTTP client, streams the
// rows into the store's COPY, matches them in paced chunks (whole or nothing: a failure rolls the
// load back or deletes the chunks written, and fails the run with the reason), then runs the rows
// to repair through the §6 pipeline (Submit: Engine::submit, or the executor directly for the
// CLI), a bounded number at a time, each with a deadline. Blocking: only a detached actor or the
// CLI calls it.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/bill_pacer.hpp"
#include "actors/messages.hpp"
#include "channels/bill.hpp"
#include "net/http_client.hpp"
#include "observability/registry.hpp"
#include "persistence/stores/bill_store.hpp"

namespace seatflow::actors {

// A run holds its lease this long unrenewed; its process renews it every third of that while the
// run is alive (actors/bill_lease.hpp), so a holder gone longer (a crash) is taken over.
inline constexpr std::uint32_t kBillRunLeaseMs = 30'000;
// The bound of one statement of a run's session: the load's COPY lasts while the gateway's answers
// arrive (every request's timeout for the steps a real bill takes). A stopped or killed engine's
// statement ends sooner: the session's client_connection_check_interval (kBillConnectionCheckMs)
// cancels it once its client is gone.
inline constexpr std::uint32_t kBillStatementMsMax = 2 * 3'600'000;
inline constexpr std::uint32_t kBillConnectionCheckMs = 1'000;

// Every bill setting, defined once here (README "Bill reconciliation"; app/config_bill.cpp).
struct BillSettings {
  bool schedule = false;                     // SEATFLOW_BILL_RECON: the daily schedule
  std::string schedule_at = "10:00";         // SEATFLOW_BILL_RECON_AT, HH:MM in `timezone`
  std::string timezone = "Asia/Shanghai";    // SEATFLOW_BILL_TIMEZONE (stripe: always UTC)
  channels::BillLimits limits;               // SEATFLOW_BILL_BYTES_MAX, SEATFLOW_BILL_ROWS_MAX
  std::uint32_t fetch_timeout_ms = 300'000;  // SEATFLOW_BILL_FETCH_TIMEOUT_MS: one request
  std::uint32_t edge_ms = 900'000;           // SEATFLOW_BILL_EDGE_MS: the day's last minutes
  std::size_t repairs_inflight_max = 16;     // SEATFLOW_BILL_REPAIRS_INFLIGHT_MAX
  std::uint32_t repair_timeout_ms = 10'000;  // SEATFLOW_BILL_REPAIR_TIMEOUT_MS: each repair
  std::uint32_t retry_ms = 1'800'000;        // SEATFLOW_BILL_RETRY_MS: the schedule's retry
  // SEATFLOW_BILL_WORK_SHARE_PCT: the share of wall time a run works while it loads and writes
  // its items; it rests the rest, leaving the machine to the callbacks (docs/BENCHMARKS.md,
  // "A bill run beside the callbacks"). 100: no rest.
  std::uint32_t work_share_pct = 50;  // actors/bill_pacer.hpp
  // Not a setting: rows per chunk of items (tests make chunks of a few rows).
  std::int64_t item_chunk_rows = persistence::kBillItemChunkRows;
  // Not a setting: who holds this process's runs (bill_run.holder). An engine: its host and
  // SEATFLOW_HTTP_ADDR, the same after a restart, so a restarted engine fails the runs it held
  // (actors/bill_lease.hpp); the CLI: its host and process. Empty: none recorded.
  std::string holder;
  // Not a setting: how long a run's lease lasts unrenewed (kBillRunLeaseMs; tests shorten it).
  std::uint32_t lease_ms = kBillRunLeaseMs;
};

// Bill rows streamed into the load between two rests.
inline constexpr std::size_t kBillPaceRows = 10'000;
// Requests one bill may take (pages, a download URL), so a gateway cannot page us forever.
inline constexpr std::size_t kBillStepsMax = 100'000;
// Runs the schedule starts for one channel and day before it gives up (an alert says why).
inline constexpr std::size_t kBillScheduleAttemptsMax = 12;
// Repairs read per page.
inline constexpr std::size_t kBillRepairPage = 500;

// How a run ended, as the CLI's exit code and the API's answer need it.
enum class BillEnd : std::uint8_t {
  done,         // reconciled; the run's counts say what was found
  not_ready,    // the gateway has not made the bill yet
  failed,       // unreachable, or not whole (hash, total, a row, a limit): nothing recorded
  store_error,  // PostgreSQL failed (the run, if opened, is failed with the reason)
  refused,      // another run of the channel and date is running, not a bill date, or a day
                // that has not ended (its end plus SEATFLOW_BILL_EDGE_MS still to come)
  no_channel,   // the channel has no bill source configured
};

struct BillRunResult {
  BillEnd end = BillEnd::failed;
  std::optional<persistence::BillRunRow> run;
  std::string detail;  // log-safe
};

// seatflow_bill_runs_total{channel,state} and seatflow_bill_items_total{channel,outcome}, every
// child added at construction.
class BillProbe {
 public:
  explicit BillProbe(observability::Registry& registry);
  void count(const persistence::BillRunRow& run);
  [[nodiscard]] std::uint64_t runs(domain::Channel channel, std::string_view state) const;
  [[nodiscard]] std::uint64_t items(domain::Channel channel, std::string_view outcome) const;

 private:
  // The final states (domain/records.hpp), a run's metric label by name.
  static constexpr std::array<domain::BillRunState, 3> kStates = {
      domain::BillRunState::done, domain::BillRunState::failed, domain::BillRunState::not_ready};
  std::array<std::array<prometheus::Counter*, kStates.size()>, domain::kChannelCount> runs_{};
  std::array<std::vector<prometheus::Counter*>, domain::kChannelCount> items_{};
};

class BillRunner {
 public:
  using Submit = std::function<void(domain::VerifiedCallback, ReplyFn)>;

  BillRunner(const std::vector<std::shared_ptr<const channels::BillDialect>>& dialects,
             BillSettings settings, net::ClientLimits client, const std::string& ca_file,
             Submit submit, observability::Registry& metrics);

  // Opens a run of the channel's bill of `date` (YYYY-MM-DD), held by settings().holder; refused
  // before anything is opened or fetched while the day's end in the channel's zone plus
  // SEATFLOW_BILL_EDGE_MS is still to come. Any thread (the API opens runs on its actors).
  [[nodiscard]] BillRunResult open(persistence::BillStore& store, domain::Channel channel,
                                   const std::string& date) const;
  // The bill zone of a channel: its dialect's when the gateway fixes one (BillDialect::bill_zone),
  // else SEATFLOW_BILL_TIMEZONE.
  [[nodiscard]] std::string zone_of(domain::Channel channel) const;
  // Runs an opened run to its end and finishes it.
  [[nodiscard]] BillRunResult execute(persistence::BillStore& store,
                                      const persistence::BillRunRow& run);
  [[nodiscard]] bool has_dialect(domain::Channel channel) const;
  [[nodiscard]] std::vector<domain::Channel> channels() const;
  [[nodiscard]] const BillSettings& settings() const { return settings_; }
  // Ends the run in progress at its next rest or within net::kCancelPollMs of a download
  // (failed: "stopped"); every later run ends at once. Any thread.
  void request_stop() { stopping_.store(true); }
  // Waits until no run executes here (the one in progress wrote its end), at most until
  // `deadline`; whether none does. Any thread.
  [[nodiscard]] bool wait_idle(std::chrono::steady_clock::time_point deadline) const;
  // Runs opened here and not finished yet (the lease keeper renews their leases).
  [[nodiscard]] std::int64_t active() const { return active_.load(); }
  [[nodiscard]] const BillProbe& probe() const { return probe_; }

 private:
  struct Loaded;
  // Fetch, load and match, committed; the rows and hash, or why not.
  [[nodiscard]] BillRunResult load(persistence::BillStore& store,
                                   const persistence::BillRunRow& run,
                                   const channels::BillDialect& dialect, Loaded& loaded);
  // The dialect's requests and answers, the rows into `load` (opened with the first answer);
  // done once the bill is whole.
  [[nodiscard]] BillRunResult fetch(persistence::BillStore& store,
                                    const persistence::BillRunRow& run,
                                    const channels::BillDialect& dialect,
                                    const channels::BillDay& day, BillPacer& pacer,
                                    std::unique_ptr<persistence::BillLoad>& load, Loaded& loaded);
  // Every row to repair through the pipeline; the outcomes written to the items.
  void repair(persistence::BillStore& store, const persistence::BillRunRow& run,
              domain::Channel channel);
  [[nodiscard]] BillRunResult finish(persistence::BillStore& store,
                                     const persistence::BillRunRow& run, BillEnd end,
                                     domain::BillRunState state, const std::string& reason,
                                     const Loaded& loaded);

  std::array<std::shared_ptr<const channels::BillDialect>, domain::kChannelCount> dialects_;
  BillSettings settings_;
  net::HttpClient client_;
  Submit submit_;
  BillProbe probe_;
  std::atomic<bool> stopping_{false};
  mutable std::atomic<std::int64_t> active_{0};
  mutable std::mutex executing_mutex_;  // guards executing_
  mutable std::condition_variable executing_done_;
  int executing_ = 0;  // runs in execute() now
};

}  // namespace seatflow::actors

// Bill reconciliation in PostgreSQL (SPEC §13, tables bill_run and bill_item, migrations 13 and
// 14): a run opened under its lease (one running run per channel and date, a crashed holder's taken
// over), the bill's rows COPYed into a TEMP staging table, matched into items in paced chunks,
// the missing items and discrepancies set-based, the repairs' outcomes, the run finished with its
// counts, and the reads the API and the CLI make. Every call returns a domain::Result; libpqxx
// errors are caught at this border.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/records.hpp"
#include "persistence/drivers/errc.hpp"
#include "persistence/drivers/pg.hpp"

namespace seatflow::persistence {

// An item's outcome (SPEC §13). `repair` is a row the runner still has to run through the §6
// pipeline; `repair_failed` one whose repair got no applied answer (a rerun tries again).
namespace bill_outcome {
inline constexpr std::string_view kMatched = "matched";
inline constexpr std::string_view kRepair = "repair";
inline constexpr std::string_view kRepaired = "repaired";
inline constexpr std::string_view kPaidAfterCancel = "paid_after_cancel";
inline constexpr std::string_view kRepairFailed = "repair_failed";
inline constexpr std::string_view kUnknownPayment = "unknown_payment";
inline constexpr std::string_view kAmountMismatch = "amount_mismatch";
inline constexpr std::string_view kTradeMismatch = "trade_mismatch";
inline constexpr std::string_view kDuplicateTrade = "duplicate_trade";
inline constexpr std::string_view kMissingAtGateway = "missing_at_gateway";
inline constexpr std::string_view kRefundUnknownHere = "refund_unknown_here";
inline constexpr std::string_view kRefundMissingAtGateway = "refund_missing_at_gateway";
}  // namespace bill_outcome

// The statement that records the discrepancies of a chunk of a run's items, each looked up by key
// first (the plan test EXPLAINs it): $1 the run's id, $2 its channel, $3 its bill date, $4 and $5
// the chunk's items' seq range [$4, $5).
[[nodiscard]] const std::string& bill_record_discrepancies_sql();

// Every outcome, in a fixed order (the metrics' children, the API's filter).
[[nodiscard]] const std::vector<std::string_view>& bill_outcomes();
// The outcomes recorded in payment_discrepancy under their own name.
[[nodiscard]] bool bill_discrepancy_kind(std::string_view outcome);

// YYYY-MM-DD naming a real calendar day (leap years included).
[[nodiscard]] bool valid_bill_date(std::string_view date);

struct BillRunRow {
  std::int64_t id = 0;
  std::string channel;
  std::string bill_date;
  std::string state;
  std::string reason;
  std::int64_t rows = 0;
  std::int64_t matched = 0;
  std::int64_t repaired = 0;
  std::int64_t discrepancies = 0;
  std::string counts = "{}";  // JSON object: outcome → items
  std::int64_t fees_cents = 0;
  std::string bill_sha256;
  std::string started_at;
  std::optional<std::string> finished_at;
  // How many items had no applied repair (counts "repair_failed" and "repair": a repair whose
  // outcome could not be written).
  [[nodiscard]] std::int64_t repair_failures() const;
};

struct BillItemRow {
  std::int64_t run_id = 0;
  std::int64_t seq = 0;
  std::string outcome;
  std::string kind;
  std::string payment_no;
  std::string trade_no;
  std::string refund_no;
  std::optional<std::int64_t> gateway_amount_cents;
  std::optional<std::int64_t> local_amount_cents;
  std::int64_t fee_cents = 0;
  std::optional<std::string> completed_at;
  std::string detail = "{}";  // JSON
  std::optional<std::int64_t> discrepancy_id;
};

// One bill row as the staging table takes it (the dialect's channels::BillRow, field by field).
struct BillLoadRow {
  std::string_view kind;  // payment | refund
  std::string_view trade_no;
  std::string_view payment_no;
  std::string_view refund_no;
  std::int64_t amount_cents = 0;
  std::int64_t fee_cents = 0;
  std::int64_t completed_at_ms = 0;
};

// The rows of a chunk of items (one transaction each); the time a chunk takes on this machine
// kind is docs/BENCHMARKS.md's "bill reconciliation" row divided by its chunks.
inline constexpr std::int64_t kBillItemChunkRows = 10'000;

// The day a run reconciles and the rule for its edges (docs/CHANNELS.md "Bill reconciliation").
struct BillMatchScope {
  std::int64_t run_id = 0;
  std::string channel;
  std::string bill_date;
  std::int64_t start_ms = 0;  // [start, end) of the day in the channel's zone
  std::int64_t end_ms = 0;
  std::uint32_t edge_ms = 900'000;               // SEATFLOW_BILL_EDGE_MS
  std::int64_t chunk_rows = kBillItemChunkRows;  // items per transaction
};

// A row the runner must run through the §6 pipeline.
struct BillRepair {
  std::int64_t seq = 0;
  std::string payment_no;
  std::string trade_no;
  std::int64_t amount_cents = 0;
};

// When a bill day may be reconciled: its end (midnight ending the day in the channel's zone) plus
// SEATFLOW_BILL_EDGE_MS, as UTC text ("2026-12-08T00:15:00.000Z"), and whether that has passed.
struct BillDayEnd {
  bool ended = false;
  std::string ends_at;
};

// A page of items and the cursor of the next (nullopt on the last page).
struct BillItemPage {
  std::vector<BillItemRow> items;
  std::optional<std::int64_t> next_cursor;
};

// Called after each paced unit of a run's work (the preparation, a chunk of items or of
// discrepancies) with the time it took; sleeps to keep the run's share of the machine and answers
// false to stop the run.
using BillPace = std::function<bool(std::chrono::steady_clock::duration worked)>;

struct BillLoadCounts {
  std::int64_t rows = 0;   // bill rows loaded
  std::int64_t items = 0;  // items written (the rows' and the missing ones)
  std::int64_t chunks = 0;
  std::int64_t record_chunks = 0;  // transactions of discrepancies
  // Working time, rests excluded: the preparation (statistics, duplicates), the chunks (matched
  // and written) together, the missing items and the chunks of discrepancies together.
  std::chrono::milliseconds prepare{0};
  std::chrono::milliseconds writes{0};
  std::chrono::milliseconds records{0};
};

// A run's load. The rows go into a session TEMP staging table by COPY, in one transaction that
// nothing else sees; match() then matches and writes the items in chunks of their own
// transactions, adds the missing items in one more, and records the discrepancies of the items
// in chunks of their own transactions, each with one event message of at most
// BillMatchScope::chunk_rows events. A run that fails after its first chunk leaves items that
// BillStore::finish deletes with the failed run, and the discrepancies of the chunks it recorded
// (a later run of the day does not record them again); no row is written before the dialect
// proved the bill whole.
class BillLoad {
 public:
  ~BillLoad();
  BillLoad(const BillLoad&) = delete;
  BillLoad& operator=(const BillLoad&) = delete;
  // One row into the COPY; errc::pg_unavailable when the store failed.
  [[nodiscard]] Result<void> row(const BillLoadRow& row);
  // Ends the COPY and matches the rows given: every row an item, the missing payments and refunds
  // as items, the discrepancy kinds recorded (once per payment, kind and bill day). `pace` is
  // called after the preparation, each chunk of items, the missing items and each chunk of
  // discrepancies but the last; its false ends the load with errc::deadline_exceeded.
  [[nodiscard]] Result<BillLoadCounts> match(const BillMatchScope& scope, const BillPace& pace);

 private:
  friend class BillStore;
  struct Impl;
  explicit BillLoad(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class BillStore {
 public:
  explicit BillStore(PgSession& pg);

  // The day's bounds (Unix ms) of `date` in time zone `zone`; errc::conflict for an unknown zone
  // or a date PostgreSQL refuses.
  [[nodiscard]] Result<std::pair<std::int64_t, std::int64_t>> day_bounds(const std::string& date,
                                                                         const std::string& zone);
  // The end of `date` in time zone `zone` plus `edge_ms`, by PostgreSQL's clock; errc::conflict
  // for an unknown zone or a date PostgreSQL refuses.
  [[nodiscard]] Result<BillDayEnd> day_end(const std::string& date, const std::string& zone,
                                           std::uint32_t edge_ms);
  // Opens a running run held by `holder` for `lease_ms`, first failing a running one whose lease
  // passed (reason "abandoned"); errc::conflict when another run of the channel and date is
  // running.
  [[nodiscard]] Result<BillRunRow> open(const std::string& channel, const std::string& date,
                                        std::uint32_t lease_ms, const std::string& holder = {});
  // Extends the lease of every running run `holder` holds to now + `lease_ms`; how many.
  [[nodiscard]] Result<std::int64_t> renew(const std::string& holder, std::uint32_t lease_ms);
  // Fails every running run `holder` holds (their items deleted) with `reason`; their ids.
  [[nodiscard]] Result<std::vector<std::int64_t>> fail_held(const std::string& holder,
                                                            const std::string& reason);
  // A load with its staging table open for rows (the run it is for is named by BillMatchScope).
  [[nodiscard]] Result<std::unique_ptr<BillLoad>> load();
  // Up to `limit` items still to repair after `after_seq`.
  [[nodiscard]] Result<std::vector<BillRepair>> repairs(std::int64_t run_id, std::int64_t after_seq,
                                                        std::size_t limit);
  // A repair's outcome (repaired | paid_after_cancel | repair_failed) and why.
  [[nodiscard]] Result<void> repaired(std::int64_t run_id, std::int64_t seq,
                                      std::string_view outcome, std::string_view detail);
  // Finishes a running run: its state, reason, rows and hash, the counts read from its items. A
  // run that is not done keeps no items (a load that failed after its first chunk wrote some). A
  // done run resolves the open discrepancies an earlier bill run of its channel opened for what
  // it matched or repaired: missing_at_gateway and unknown_payment for a payment,
  // refund_unknown_here and refund_missing_at_gateway for a refund (resolved_at, and the detail's
  // resolvedBy "bill run N"), each with its discrepancy.resolved event.
  [[nodiscard]] Result<BillRunRow> finish(std::int64_t run_id, domain::BillRunState state,
                                          std::string_view reason, std::int64_t rows,
                                          std::string_view sha256);
  [[nodiscard]] Result<BillRunRow> run(std::int64_t run_id);
  // Runs newest day first; empty strings mean no filter.
  [[nodiscard]] Result<std::vector<BillRunRow>> runs(const std::string& channel,
                                                     const std::string& from, const std::string& to,
                                                     std::size_t limit);
  // Items in seq order after `cursor`; `outcome` empty: all. errc::not_found for no such run.
  [[nodiscard]] Result<BillItemPage> items(std::int64_t run_id, const std::string& outcome,
                                           std::int64_t cursor, std::size_t limit);
  // The schedule's question: should the channel's bill of `date` be run now? True when no run
  // of it is done or holds its lease, fewer than `attempts_max` were started, and the last one
  // finished `retry_ms` ago or more.
  [[nodiscard]] Result<bool> due(const std::string& channel, const std::string& date,
                                 std::size_t attempts_max, std::uint32_t retry_ms);
  // Yesterday's date and the time of day (HH:MM) now in `zone`.
  [[nodiscard]] Result<std::pair<std::string, std::string>> local_clock(const std::string& zone);

 private:
  PgSession& pg_;
};

}  // namespace seatflow::persistence

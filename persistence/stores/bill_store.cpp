// Bill runs: open under the lease, finish with the counts read from the items, the repairs'
// outcomes, the schedule's question and the reads of the API and the CLI.
#include "persistence/stores/bill_store.hpp"

#include <array>

#include <nlohmann/json.hpp>

#include "domain/assert.hpp"
#include "persistence/drivers/log.hpp"
#include "persistence/stores/events.hpp"
#include "persistence/stores/guarded.hpp"
#include "persistence/stores/status_sql.hpp"

namespace seatflow::persistence {
namespace {

constexpr const char* kRunColumns =
    "id, channel, bill_date::text, state, COALESCE(reason, ''), rows, matched, repaired, "
    "discrepancies, counts::text, fees_cents, COALESCE(bill_sha256, ''), "
    "to_json(started_at) #>> '{}', to_json(finished_at) #>> '{}'";

constexpr const char* kDayBounds =
    "SELECT (extract(epoch FROM ($1::date::timestamp AT TIME ZONE $2)) * 1000)::bigint, "
    "  (extract(epoch FROM (($1::date + 1)::timestamp AT TIME ZONE $2)) * 1000)::bigint";
// The day's end in its zone plus the edge, as UTC text, and whether PostgreSQL's now() passed it.
constexpr const char* kDayEnd =
    "WITH e AS (SELECT ($1::date + 1)::timestamp AT TIME ZONE $2 "
    "  + $3::bigint * interval '1 millisecond' AS at) "
    "SELECT to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), now() >= e.at "
    "FROM e";
constexpr const char* kLocalClock =
    "SELECT ((now() AT TIME ZONE $1)::date - 1)::text, to_char(now() AT TIME ZONE $1, 'HH24:MI')";
using domain::BillRunState;
using status_sql::named;

// A running run whose holder's lease passed is taken over.
const std::string kAbandon = "UPDATE bill_run SET state = " + named(BillRunState::failed) +
                             ", reason = 'abandoned', finished_at = now() "
                             "WHERE channel = $1 AND bill_date = $2::date AND state = " +
                             named(BillRunState::running) + " AND lease_until < now() RETURNING id";
// The items of a run that did not finish done: the chunks a failed or abandoned load wrote.
constexpr const char* kDropItems = "DELETE FROM bill_item WHERE run_id = $1";
const std::string kOpen =
    std::string(
        "INSERT INTO bill_run (channel, bill_date, state, lease_until, holder) "
        "VALUES ($1, $2::date, ") +
    named(BillRunState::running) +
    ", now() + $3 * interval '1 millisecond', NULLIF($4, '')) "
    "RETURNING " +
    kRunColumns;
// The holder's running runs, kept (the lease keeper) or failed (its engine restarted or stops).
const std::string kRenew =
    "UPDATE bill_run SET lease_until = now() + $2 * interval '1 millisecond' "
    "WHERE state = " +
    named(BillRunState::running) + " AND holder = $1";
const std::string kFailHeld =
    "UPDATE bill_run SET state = " + named(BillRunState::failed) +
    ", reason = $2, finished_at = now() WHERE state = " + named(BillRunState::running) +
    " AND holder = $1 RETURNING id";
// What a done run matched or repaired closes what an earlier bill run of its channel found
// missing or unknown of it (the item's key as kRecordDiscrepancies writes it, bill_load.cpp): a
// hash of the run's matched keys against the open discrepancies, each looked up by key.
const std::string kResolveMatched = events::with_event(
    "UPDATE payment_discrepancy d SET resolved_at = now(), "
    "  detail = d.detail || jsonb_build_object('resolvedBy', 'bill run ' || $1::bigint::text) "
    "FROM (SELECT DISTINCT CASE WHEN i.payment_no = '' THEN 'trade:' || i.trade_no "
    "        ELSE i.payment_no END AS no, i.kind "
    "      FROM bill_item i WHERE i.run_id = $1::bigint AND i.outcome IN ('matched', 'repaired')) "
    "m "
    "WHERE d.resolved_at IS NULL AND d.payment_no = m.no "
    "  AND d.kind = ANY (CASE WHEN m.kind = 'payment' "
    "    THEN ARRAY['missing_at_gateway', 'unknown_payment'] "
    "    ELSE ARRAY['refund_unknown_here', 'refund_missing_at_gateway'] END) "
    "  AND d.detail ->> 'source' = 'bill' AND d.detail ->> 'channel' = $2 "
    "  AND d.detail ->> 'runId' IS DISTINCT FROM $1::bigint::text "
    "RETURNING d.id::text AS event_key, d.payment_no, d.order_no, "
    "  COALESCE((d.detail ->> 'gatewayAmountCents')::bigint, "
    "           (d.detail ->> 'localAmountCents')::bigint) AS amount_cents, d.kind AS detail",
    events::kDiscrepancyResolved, "count(*)");
// Bill discrepancy kinds and paid_after_cancel (the §6 record a repair made) are discrepancies.
const std::string kFinish =
    std::string(
        "WITH c AS (SELECT outcome, count(*) AS n, COALESCE(sum(fee_cents), 0) AS f "
        "  FROM bill_item WHERE run_id = $1 GROUP BY outcome) "
        "UPDATE bill_run SET state = $2, reason = NULLIF($3, ''), rows = $4, "
        "  bill_sha256 = NULLIF($5, ''), finished_at = now(), "
        "  counts = COALESCE((SELECT jsonb_object_agg(outcome, n) FROM c), '{}'::jsonb), "
        "  matched = COALESCE((SELECT sum(n) FROM c WHERE outcome = 'matched'), 0), "
        "  repaired = COALESCE((SELECT sum(n) FROM c WHERE outcome = 'repaired'), 0), "
        "  discrepancies = COALESCE((SELECT sum(n) FROM c WHERE outcome IN ('paid_after_cancel', "
        "    'unknown_payment', 'amount_mismatch', 'trade_mismatch', 'duplicate_trade', "
        "    'missing_at_gateway', 'refund_unknown_here', 'refund_missing_at_gateway')), 0), "
        "  fees_cents = COALESCE((SELECT sum(f) FROM c), 0) "
        "WHERE id = $1 AND state = ") +
    named(BillRunState::running) + " RETURNING " + kRunColumns;
const std::string kRun = std::string("SELECT ") + kRunColumns + " FROM bill_run WHERE id = $1";
const std::string kRuns = std::string("SELECT ") + kRunColumns +
                          " FROM bill_run WHERE ($1 = '' OR channel = $1) "
                          "AND ($2 = '' OR bill_date >= $2::date) "
                          "AND ($3 = '' OR bill_date <= $3::date) "
                          "ORDER BY bill_date DESC, id DESC LIMIT $4";
constexpr const char* kRepairs =
    "SELECT seq, payment_no, trade_no, gateway_amount_cents FROM bill_item "
    "WHERE run_id = $1 AND seq > $2 AND outcome = 'repair' ORDER BY seq LIMIT $3";
// paid_after_cancel names the §6 discrepancy the pipeline recorded.
constexpr const char* kRepaired =
    "UPDATE bill_item i SET outcome = $3, detail = i.detail || jsonb_build_object('repair', "
    "$4::text), "
    "  discrepancy_id = CASE WHEN $3 = 'paid_after_cancel' THEN (SELECT d.id FROM "
    "    payment_discrepancy d WHERE d.payment_no = i.payment_no AND d.kind = $3 "
    "    ORDER BY d.id DESC LIMIT 1) END "
    "WHERE i.run_id = $1 AND i.seq = $2";
// A discrepancy item names its discrepancy, looked up when read by key (payment_discrepancy's
// (payment_no, kind, id) index, migration 15; a repair's paid_after_cancel is stored): the one its
// run's bill day recorded, else the open one, else the latest. A run writes no link: an UPDATE of
// each of a million unknown items (a subquery per item over the table before migration 15) cost
// more than the run's matching.
// An item matched from the bill is written without its detail (migration 14; every outcome since
// migration 15, a repair's answer the only member written): the detail is built from its columns
// and run, as the matching wrote it before. The missing items' own detail (it names the source)
// is read as written.
constexpr const char* kItemColumns =
    "SELECT i.run_id, i.seq, i.outcome, i.kind, i.payment_no, i.trade_no, i.refund_no, "
    "  i.gateway_amount_cents, i.local_amount_cents, i.fee_cents, "
    "  to_json(i.completed_at) #>> '{}', "
    "  CASE WHEN i.detail ? 'source' THEN i.detail::text ELSE (jsonb_build_object("
    "    'source', 'bill', 'runId', i.run_id, 'channel', r.channel, 'billDate', "
    "    r.bill_date::text, 'tradeNo', i.trade_no, 'gatewayAmountCents', i.gateway_amount_cents, "
    "    'localAmountCents', i.local_amount_cents, 'localStatus', i.local_status, "
    "    'localTradeNo', i.local_trade_no) || i.detail)::text END, "
    "  COALESCE(i.discrepancy_id, CASE WHEN i.outcome IN ('unknown_payment', 'amount_mismatch', "
    "    'trade_mismatch', 'duplicate_trade', 'missing_at_gateway', 'refund_unknown_here', "
    "    'refund_missing_at_gateway', 'paid_after_cancel') THEN (SELECT d.id "
    "    FROM payment_discrepancy d WHERE d.payment_no = CASE WHEN i.payment_no = '' "
    "      THEN 'trade:' || i.trade_no ELSE i.payment_no END AND d.kind = i.outcome "
    "    ORDER BY d.detail ->> 'source' = 'bill' AND d.detail ->> 'channel' = r.channel "
    "      AND d.detail ->> 'billDate' = r.bill_date::text DESC, d.resolved_at IS NULL DESC, "
    "      d.id DESC LIMIT 1) END) "
    "FROM bill_item i JOIN bill_run r ON r.id = i.run_id ";
// Every item, or one outcome's (any but matched through bill_item_open_idx).
const std::string kItems =
    std::string(kItemColumns) + "WHERE i.run_id = $1 AND i.seq > $2 ORDER BY i.seq LIMIT $3";
const std::string kItemsOf = std::string(kItemColumns) +
                             "WHERE i.run_id = $1 AND i.seq > $2 AND i.outcome = $3 "
                             "ORDER BY i.seq LIMIT $4";
const std::string kDue =
    "SELECT NOT EXISTS (SELECT 1 FROM bill_run WHERE channel = $1 AND bill_date = $2::date "
    "    AND (state = " +
    named(BillRunState::done) + " OR state = " + named(BillRunState::running) +
    " AND lease_until >= now())) "
    "  AND (SELECT count(*) FROM bill_run WHERE channel = $1 AND bill_date = $2::date) < $3 "
    "  AND COALESCE((SELECT max(finished_at) FROM bill_run WHERE channel = $1 "
    "    AND bill_date = $2::date), '-infinity') <= now() - $4 * interval '1 millisecond'";

BillRunRow run_row(const pqxx::row& row) {
  BillRunRow run;
  run.id = row[0].as<std::int64_t>();
  run.channel = row[1].as<std::string>();
  run.bill_date = row[2].as<std::string>();
  run.state = row[3].as<std::string>();
  run.reason = row[4].as<std::string>();
  run.rows = row[5].as<std::int64_t>();
  run.matched = row[6].as<std::int64_t>();
  run.repaired = row[7].as<std::int64_t>();
  run.discrepancies = row[8].as<std::int64_t>();
  run.counts = row[9].as<std::string>();
  run.fees_cents = row[10].as<std::int64_t>();
  run.bill_sha256 = row[11].as<std::string>();
  run.started_at = row[12].as<std::string>();
  run.finished_at = optional_of<std::string>(row[13]);
  return run;
}

BillItemRow item_row(const pqxx::row& row) {
  BillItemRow item;
  item.run_id = row[0].as<std::int64_t>();
  item.seq = row[1].as<std::int64_t>();
  item.outcome = row[2].as<std::string>();
  item.kind = row[3].as<std::string>();
  item.payment_no = row[4].as<std::string>();
  item.trade_no = row[5].as<std::string>();
  item.refund_no = row[6].as<std::string>();
  item.gateway_amount_cents = optional_of<std::int64_t>(row[7]);
  item.local_amount_cents = optional_of<std::int64_t>(row[8]);
  item.fee_cents = row[9].as<std::int64_t>();
  item.completed_at = optional_of<std::string>(row[10]);
  item.detail = row[11].as<std::string>();
  item.discrepancy_id = optional_of<std::int64_t>(row[12]);
  return item;
}

bool is_data_error(const std::exception& error) {
  // Class 22 (data exception: a date out of range, an unknown time zone).
  const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error);
  return sql != nullptr && sql->sqlstate().starts_with("22");
}

}  // namespace

const std::vector<std::string_view>& bill_outcomes() {
  namespace o = bill_outcome;
  static const std::vector<std::string_view> all = {
      o::kMatched,        o::kRepair,           o::kRepaired,          o::kPaidAfterCancel,
      o::kRepairFailed,   o::kUnknownPayment,   o::kAmountMismatch,    o::kTradeMismatch,
      o::kDuplicateTrade, o::kMissingAtGateway, o::kRefundUnknownHere, o::kRefundMissingAtGateway};
  return all;
}

bool bill_discrepancy_kind(std::string_view outcome) {
  namespace o = bill_outcome;
  return outcome == o::kUnknownPayment || outcome == o::kAmountMismatch ||
         outcome == o::kTradeMismatch || outcome == o::kDuplicateTrade ||
         outcome == o::kMissingAtGateway || outcome == o::kRefundUnknownHere ||
         outcome == o::kRefundMissingAtGateway;
}

bool valid_bill_date(std::string_view date) {
  if (date.size() != 10 || date[4] != '-' || date[7] != '-') {
    return false;
  }
  int parts[3] = {0, 0, 0};
  const std::array<std::pair<std::size_t, std::size_t>, 3> spans = {{{0, 4}, {5, 2}, {8, 2}}};
  for (std::size_t k = 0; k < spans.size(); ++k) {
    for (std::size_t i = spans[k].first; i < spans[k].first + spans[k].second; ++i) {
      if (date[i] < '0' || date[i] > '9') {
        return false;
      }
      parts[k] = parts[k] * 10 + (date[i] - '0');
    }
  }
  const int year = parts[0];
  const int month = parts[1];
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 1970 || month < 1 || month > 12) {
    return false;
  }
  const int days = kDays[static_cast<std::size_t>(month - 1)] + (month == 2 && leap ? 1 : 0);
  return parts[2] >= 1 && parts[2] <= days;
}

std::int64_t BillRunRow::repair_failures() const {
  const auto parsed = nlohmann::json::parse(counts, nullptr, false);
  if (!parsed.is_object()) {
    return 0;
  }
  std::int64_t total = 0;
  for (const auto name : {bill_outcome::kRepairFailed, bill_outcome::kRepair}) {
    const auto it = parsed.find(name);
    total += it != parsed.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
  }
  return total;
}

BillStore::BillStore(PgSession& pg) : pg_(pg) {}

Result<std::pair<std::int64_t, std::int64_t>> BillStore::day_bounds(const std::string& date,
                                                                    const std::string& zone) {
  return guarded<std::pair<std::int64_t, std::int64_t>>(
      pg_, "bill_day_bounds",
      [&]() -> Result<std::pair<std::int64_t, std::int64_t>> {
        pqxx::read_transaction tx(pg_.connection());
        const auto row = tx.exec_params1(kDayBounds, date, zone);
        return std::make_pair(row[0].as<std::int64_t>(), row[1].as<std::int64_t>());
      },
      [&](const std::exception& error) -> std::optional<Failure> {
        if (is_data_error(error)) {
          return refused(errc::conflict, "not a day in time zone " + zone);
        }
        return std::nullopt;
      });
}

Result<std::pair<std::string, std::string>> BillStore::local_clock(const std::string& zone) {
  return guarded<std::pair<std::string, std::string>>(
      pg_, "bill_local_clock",
      [&]() -> Result<std::pair<std::string, std::string>> {
        pqxx::read_transaction tx(pg_.connection());
        const auto row = tx.exec_params1(kLocalClock, zone);
        return std::make_pair(row[0].as<std::string>(), row[1].as<std::string>());
      },
      [&](const std::exception& error) -> std::optional<Failure> {
        if (is_data_error(error)) {
          return refused(errc::conflict, "unknown time zone " + zone);
        }
        return std::nullopt;
      });
}

Result<BillDayEnd> BillStore::day_end(const std::string& date, const std::string& zone,
                                      std::uint32_t edge_ms) {
  return guarded<BillDayEnd>(
      pg_, "bill_day_end",
      [&]() -> Result<BillDayEnd> {
        pqxx::read_transaction tx(pg_.connection());
        const auto row = tx.exec_params1(kDayEnd, date, zone, static_cast<std::int64_t>(edge_ms));
        return BillDayEnd{row[1].as<bool>(), row[0].as<std::string>()};
      },
      [&](const std::exception& error) -> std::optional<Failure> {
        if (is_data_error(error)) {
          return refused(errc::conflict, "not a day in time zone " + zone);
        }
        return std::nullopt;
      });
}

Result<std::int64_t> BillStore::renew(const std::string& holder, std::uint32_t lease_ms) {
  SEATFLOW_ASSERT(lease_ms > 0);
  return guarded<std::int64_t>(pg_, "bill_renew", [&]() -> Result<std::int64_t> {
    pqxx::work tx(pg_.connection());
    const auto renewed = tx.exec_params(kRenew, holder, lease_ms).affected_rows();
    tx.commit();
    return static_cast<std::int64_t>(renewed);
  });
}

Result<std::vector<std::int64_t>> BillStore::fail_held(const std::string& holder,
                                                       const std::string& reason) {
  return guarded<std::vector<std::int64_t>>(
      pg_, "bill_fail_held", [&]() -> Result<std::vector<std::int64_t>> {
        pqxx::work tx(pg_.connection());
        std::vector<std::int64_t> failed;
        for (const auto& row : tx.exec_params(kFailHeld, holder, reason)) {
          failed.push_back(row[0].as<std::int64_t>());
          (void)tx.exec_params(kDropItems, failed.back());
        }
        tx.commit();
        return failed;
      });
}

Result<BillRunRow> BillStore::open(const std::string& channel, const std::string& date,
                                   std::uint32_t lease_ms, const std::string& holder) {
  SEATFLOW_ASSERT(domain::parse_channel(channel).has_value());
  SEATFLOW_ASSERT(valid_bill_date(date));
  SEATFLOW_ASSERT(lease_ms > 0);
  return guarded<BillRunRow>(
      pg_, "bill_open",
      [&]() -> Result<BillRunRow> {
        pqxx::work tx(pg_.connection());
        for (const auto& taken : tx.exec_params(kAbandon, channel, date)) {
          (void)tx.exec_params(kDropItems, taken[0].as<std::int64_t>());
          logger().warn("event=bill_run_abandoned channel={} bill_date={}", channel, date);
        }
        auto run = run_row(tx.exec_params1(kOpen, channel, date, lease_ms, holder));
        tx.commit();
        return run;
      },
      [&](const std::exception& error) -> std::optional<Failure> {
        if (classify(error) == PgErrorClass::unique_violation) {
          return refused(errc::conflict, "a run of " + channel + " " + date + " is in progress");
        }
        if (is_data_error(error)) {
          return refused(errc::conflict, "not a bill date: " + date);
        }
        return std::nullopt;
      });
}

Result<std::vector<BillRepair>> BillStore::repairs(std::int64_t run_id, std::int64_t after_seq,
                                                   std::size_t limit) {
  SEATFLOW_ASSERT(run_id > 0);
  SEATFLOW_ASSERT(limit > 0);
  return guarded<std::vector<BillRepair>>(
      pg_, "bill_repairs", [&]() -> Result<std::vector<BillRepair>> {
        pqxx::read_transaction tx(pg_.connection());
        std::vector<BillRepair> out;
        for (const auto& row : tx.exec_params(kRepairs, run_id, after_seq, limit)) {
          out.push_back({row[0].as<std::int64_t>(), row[1].as<std::string>(),
                         row[2].as<std::string>(), row[3].as<std::int64_t>()});
        }
        return out;
      });
}

Result<void> BillStore::repaired(std::int64_t run_id, std::int64_t seq, std::string_view outcome,
                                 std::string_view detail) {
  SEATFLOW_ASSERT(run_id > 0);
  SEATFLOW_ASSERT(seq > 0);
  return guarded<void>(pg_, "bill_repaired", [&]() -> Result<void> {
    pqxx::work tx(pg_.connection());
    (void)tx.exec_params(kRepaired, run_id, seq, std::string(outcome), std::string(detail));
    tx.commit();
    return {};
  });
}

Result<BillRunRow> BillStore::finish(std::int64_t run_id, domain::BillRunState state,
                                     std::string_view reason, std::int64_t rows,
                                     std::string_view sha256) {
  SEATFLOW_ASSERT(run_id > 0);
  SEATFLOW_ASSERT(rows >= 0);
  return guarded<BillRunRow>(pg_, "bill_finish", [&]() -> Result<BillRunRow> {
    pqxx::work tx(pg_.connection());
    SEATFLOW_ASSERT(domain::is_legal_bill_run_move(BillRunState::running, state));
    if (state != BillRunState::done) {
      (void)tx.exec_params(kDropItems, run_id);
    }
    const auto done = tx.exec_params(kFinish, run_id, std::string(domain::to_string(state)),
                                     std::string(reason), rows, std::string(sha256));
    if (done.empty()) {
      return refused(errc::conflict, "the run is not running (taken over as abandoned?)");
    }
    auto run = run_row(done[0]);
    if (state == BillRunState::done) {
      (void)tx.exec_params(kResolveMatched, run_id, run.channel);
    }
    tx.commit();
    return run;
  });
}

Result<BillRunRow> BillStore::run(std::int64_t run_id) {
  SEATFLOW_ASSERT(run_id > 0);
  return guarded<BillRunRow>(pg_, "bill_run", [&]() -> Result<BillRunRow> {
    pqxx::read_transaction tx(pg_.connection());
    const auto rows = tx.exec_params(kRun, run_id);
    if (rows.empty()) {
      return refused(errc::not_found, "unknown bill run");
    }
    return run_row(rows[0]);
  });
}

Result<std::vector<BillRunRow>> BillStore::runs(const std::string& channel, const std::string& from,
                                                const std::string& to, std::size_t limit) {
  return guarded<std::vector<BillRunRow>>(
      pg_, "bill_runs", [&]() -> Result<std::vector<BillRunRow>> {
        pqxx::read_transaction tx(pg_.connection());
        std::vector<BillRunRow> out;
        for (const auto& row : tx.exec_params(kRuns, channel, from, to, limit)) {
          out.push_back(run_row(row));
        }
        return out;
      });
}

Result<BillItemPage> BillStore::items(std::int64_t run_id, const std::string& outcome,
                                      std::int64_t cursor, std::size_t limit) {
  SEATFLOW_ASSERT(run_id > 0);
  SEATFLOW_ASSERT(limit > 0);
  return guarded<BillItemPage>(pg_, "bill_items", [&]() -> Result<BillItemPage> {
    pqxx::read_transaction tx(pg_.connection());
    if (tx.exec_params(kRun, run_id).empty()) {
      return refused(errc::not_found, "unknown bill run");
    }
    BillItemPage page;
    const auto rows = outcome.empty()
                          ? tx.exec_params(kItems, run_id, cursor, limit + 1)
                          : tx.exec_params(kItemsOf, run_id, cursor, outcome, limit + 1);
    for (const auto& row : rows) {
      page.items.push_back(item_row(row));
    }
    if (page.items.size() > limit) {
      page.items.pop_back();
      page.next_cursor = page.items.back().seq;
    }
    return page;
  });
}

Result<bool> BillStore::due(const std::string& channel, const std::string& date,
                            std::size_t attempts_max, std::uint32_t retry_ms) {
  return guarded<bool>(pg_, "bill_due", [&]() -> Result<bool> {
    pqxx::read_transaction tx(pg_.connection());
    return tx.exec_params1(kDue, channel, date, attempts_max, retry_ms)[0].as<bool>();
  });
}

}  // namespace seatflow::persistence

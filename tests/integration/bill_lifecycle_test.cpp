// Bill runs that end and scale, below HTTP (SPEC §13): a day that has not ended is refused before a
// run is opened; the lease keeper renews a live run's short lease and fails what its holder held;
// thousands of unknown payments link their items to their discrepancies set-based (the plans of
// the discrepancies' lookups go by key or by hash, never a scan per item); the discrepancies are
// recorded in chunks of items, and a run stopped between two is completed by the next.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/bill_lease.hpp"
#include "support/bill_world.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using actors::BillEnd;
using testing::bill_payment;
using testing::BillWorld;
using testing::shanghai_ms;
using namespace std::chrono_literals;

const std::string kDay = "2026-11-20";
const auto kMorning = shanghai_ms(kDay, 10, 0);

TEST(BillLifecycle, ADayThatHasNotEndedIsRefusedBeforeARunIsOpened) {
  actors::BillSettings settings;
  settings.edge_ms = 0;
  BillWorld w(settings);
  const auto today = std::to_string(
      w.scalar("SELECT to_char((now() AT TIME ZONE 'Asia/Shanghai')::date, 'YYYYMMDD')::bigint"));
  const auto date = today.substr(0, 4) + "-" + today.substr(4, 2) + "-" + today.substr(6, 2);
  w.gateway().set_bill(date, {});
  for (const auto& day : {date, std::string("2099-12-31")}) {
    const auto refused = w.run(day);
    EXPECT_EQ(refused.end, BillEnd::refused) << refused.detail;
    EXPECT_FALSE(refused.run);
    EXPECT_NE(refused.detail.find("the bill day " + day + " has not ended"), std::string::npos)
        << refused.detail;
  }
  EXPECT_EQ(w.gateway().requests(), 0);
  EXPECT_EQ(w.scalar("SELECT count(*) FROM bill_run"), 0);
  // A day that has ended runs.
  w.gateway().set_bill(kDay, {});
  EXPECT_EQ(w.run(kDay).end, BillEnd::done);
  const auto end = w.store().day_end(kDay, "Asia/Shanghai", 900'000);
  ASSERT_TRUE(end.ok()) << end.detail();
  EXPECT_TRUE(end.value().ended);
  EXPECT_EQ(end.value().ends_at, "2026-11-20T16:15:00.000Z");
}

// A run that lives longer than its lease keeps it: another holder is refused all along, and once
// the run ended its lease is no one's.
TEST(BillLifecycle, TheLeaseKeeperRenewsALiveRunsShortLease) {
  actors::BillSettings settings;
  settings.holder = "test-holder-renew";
  settings.lease_ms = 1'500;
  BillWorld w(settings);
  w.gateway().set_bill(kDay, {bill_payment("T-x", "x-unknown", 100, kMorning)});
  w.gateway().set_delay_ms(5'000);
  const actors::BillLeaseKeeper keeper(w.dsn(), persistence::PgLimits{}, settings.holder,
                                       settings.lease_ms, [&w] { return w.runner().active(); });
  auto run = std::async(std::launch::async, [&w] { return w.run(kDay); });
  persistence::PgSession other_pg(w.dsn(), 5'000, nullptr);
  persistence::BillStore other(other_pg);
  std::this_thread::sleep_for(1'500ms);  // the first lease has passed: renewed since
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(500ms);
    const auto taken = other.open("hmac", kDay, 1'500, "test-holder-other");
    EXPECT_FALSE(taken.ok()) << "round " << i;
    if (!taken.ok()) {
      EXPECT_EQ(taken.error(), persistence::errc::conflict) << taken.detail();
    }
  }
  const auto result = run.get();
  EXPECT_EQ(result.end, BillEnd::done) << result.detail;
  EXPECT_EQ(w.runner().active(), 0);
  EXPECT_EQ(w.scalar("SELECT count(*) FROM bill_run WHERE holder = 'test-holder-renew' "
                     "AND state = 'done'"),
            1);
}

// An engine that starts fails the runs its holder still holds (its crash left them), items and
// all; another holder's run is left alone.
TEST(BillLifecycle, TheKeeperFailsItsHoldersRunsAtStartAndAtRelease) {
  BillWorld w;
  auto mine = w.store().open("hmac", kDay, 3'600'000, "test-holder-crashed");
  ASSERT_TRUE(mine.ok()) << mine.detail();
  auto theirs = w.store().open("hmac", "2026-11-19", 3'600'000, "test-holder-alive");
  ASSERT_TRUE(theirs.ok()) << theirs.detail();
  const auto id = std::to_string(mine.value().id);
  EXPECT_EQ(
      w.scalar("WITH i AS (INSERT INTO bill_item (run_id, seq, outcome, kind, payment_no, "
               "trade_no) VALUES (" +
               id + ", 1, 'matched', 'payment', 'P', 'T') RETURNING 1) SELECT count(*) FROM i"),
      1);
  actors::BillLeaseKeeper keeper(w.dsn(), persistence::PgLimits{}, "test-holder-crashed", 900,
                                 [] { return std::int64_t{1}; });
  const auto failed = w.store().run(mine.value().id);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed.value().state, "failed");
  EXPECT_EQ(failed.value().reason, "abandoned: its engine restarted");
  EXPECT_EQ(w.scalar("SELECT count(*) FROM bill_item WHERE run_id = " + id), 0);
  EXPECT_EQ(w.store().run(theirs.value().id).value().state, "running");

  auto again = w.store().open("hmac", kDay, 3'600'000, "test-holder-crashed");
  ASSERT_TRUE(again.ok()) << again.detail();
  keeper.release();
  EXPECT_EQ(w.store().run(again.value().id).value().reason, "the engine stopped during the run");
  EXPECT_EQ(w.store().run(theirs.value().id).value().state, "running");
}

// Whether a plan reads all of payment_discrepancy once per outer row: a sequential scan of it
// inside a SubPlan or on the inner side of a nested loop (a lookup by key there is fine).
bool scans_per_row(const nlohmann::json& node, bool per_row) {
  if (per_row && node.value("Relation Name", "") == "payment_discrepancy" &&
      node.value("Node Type", "") == "Seq Scan") {
    return true;
  }
  if (node.contains("Plans")) {
    for (const auto& child : node.at("Plans")) {
      const auto relation = child.value("Parent Relationship", "");
      const bool child_per_row =
          per_row || relation == "SubPlan" ||
          (node.value("Node Type", "") == "Nested Loop" && relation == "Inner");
      if (scans_per_row(child, child_per_row)) {
        return true;
      }
    }
  }
  return false;
}

// Thousands of payments nobody here knows: every item names its discrepancy (looked up by key when
// read; the run writes no link), and the discrepancies' lookup of payment_discrepancy goes by key
// or by hash, never a scan per item.
TEST(BillLifecycle, UnknownPaymentsAreLinkedToTheirDiscrepanciesSetBased) {
  BillWorld w;
  constexpr int kRows = 4'000;
  std::vector<channels::HmacBillEntry> entries;
  for (int i = 0; i < kRows; ++i) {
    entries.push_back(bill_payment("T-u" + std::to_string(i),
                                   w.stores().id("unknown-" + std::to_string(i)), 100, kMorning));
  }
  w.gateway().set_bill(kDay, entries);
  const auto first = w.run(kDay);
  ASSERT_EQ(first.end, BillEnd::done) << first.detail;
  ASSERT_TRUE(first.run);
  const auto id = std::to_string(first.run->id);
  // Each item names its discrepancy when read (looked up by key; the run writes no link).
  const auto linked = [&w](std::int64_t run) {
    std::map<std::int64_t, std::int64_t> out;  // seq → discrepancy
    std::int64_t cursor = 0;
    while (true) {
      const auto page = w.store().items(run, "unknown_payment", cursor, 1000);
      EXPECT_TRUE(page.ok()) << page.detail();
      for (const auto& item : page.value().items) {
        EXPECT_TRUE(item.discrepancy_id) << item.seq;
        out[item.seq] = item.discrepancy_id.value_or(0);
      }
      if (!page.value().next_cursor) {
        return out;
      }
      cursor = *page.value().next_cursor;
    }
  };
  const auto first_links = linked(first.run->id);
  EXPECT_EQ(first_links.size(), static_cast<std::size_t>(kRows));
  // A rerun opens none and its items name the same discrepancies.
  const auto second = w.run(kDay);
  ASSERT_EQ(second.end, BillEnd::done) << second.detail;
  EXPECT_EQ(w.scalar("SELECT count(*) FROM payment_discrepancy WHERE kind = 'unknown_payment'"),
            kRows);
  EXPECT_EQ(linked(second.run->id), first_links);
  EXPECT_EQ(w.scalar("SELECT count(DISTINCT discrepancy_id) FROM bill_item WHERE run_id = " + id),
            0);  // nothing stored: no UPDATE of every item

  pqxx::connection conn(w.dsn());
  pqxx::nontransaction tx(conn);
  tx.exec("ANALYZE payment_discrepancy, bill_item");
  for (const auto& [name, sql] :
       {std::pair{"record", persistence::bill_record_discrepancies_sql()}}) {
    tx.exec("DEALLOCATE ALL");
    tx.exec("PREPARE plan_probe AS " + sql);
    // A chunk of the run's items: all of them.
    const auto call = "EXECUTE plan_probe(" + id + ", 'hmac', '" + kDay + "', 1, " +
                      std::to_string(kRows + 1) + ")";
    for (const auto* mode : {"force_generic_plan", "force_custom_plan"}) {
      tx.exec(std::string("SET plan_cache_mode = ") + mode);
      const auto plan = nlohmann::json::parse(
          tx.exec1("EXPLAIN (FORMAT JSON) " + call)[0].as<std::string>())[0]["Plan"];
      EXPECT_FALSE(scans_per_row(plan, false)) << name << ' ' << mode << ": " << plan.dump(1);
    }
  }
}

// The discrepancies are recorded in chunks of items, each its own transaction and event message
// with at most a chunk's events; a run stopped between two chunks leaves some recorded, and the
// next run of the day records the rest, each once (one discrepancy and one event).
TEST(BillLifecycle, DiscrepanciesAreRecordedInChunksAndAStopBetweenThemIsCompletedLater) {
  constexpr int kUnknown = 25;
  constexpr std::int64_t kChunk = 4;
  actors::BillSettings settings;
  settings.item_chunk_rows = kChunk;
  settings.work_share_pct = 100;
  BillWorld w(settings);
  const auto missing = w.seed("missing", 1, 1, 5000, "T-missing", kMorning);
  std::vector<std::string> unknown;
  std::vector<channels::HmacBillEntry> entries;
  for (int i = 0; i < kUnknown; ++i) {
    unknown.push_back(w.stores().id("unknown-" + std::to_string(i)));
    entries.push_back(bill_payment("T-u" + std::to_string(i), unknown.back(), 100, kMorning));
  }
  const auto bounds = w.store().day_bounds(kDay, w.runner().zone_of(domain::Channel::hmac));
  ASSERT_TRUE(bounds.ok()) << bounds.detail();
  const auto run = w.store().open("hmac", kDay, 3'600'000);
  ASSERT_TRUE(run.ok()) << run.detail();
  auto load = w.store().load();
  ASSERT_TRUE(load.ok()) << load.detail();
  for (const auto& entry : entries) {
    ASSERT_TRUE(load.value()
                    ->row({"payment", entry.trade_no, entry.payment_no, "", entry.amount_cents, 0,
                           entry.completed_at_ms})
                    .ok());
  }
  const persistence::BillMatchScope scope{
      run.value().id,        "hmac",           kDay,  bounds.value().first,
      bounds.value().second, settings.edge_ms, kChunk};
  // Stops at the first rest after a chunk of discrepancies.
  const auto stopped = load.value()->match(
      scope, [&w](auto) { return w.scalar("SELECT count(*) FROM payment_discrepancy") == 0; });
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.error(), persistence::errc::deadline_exceeded);
  load.value().reset();
  const auto recorded = w.scalar("SELECT count(*) FROM payment_discrepancy");
  EXPECT_GT(recorded, 0);
  EXPECT_LE(recorded, kChunk);
  ASSERT_TRUE(
      w.store().finish(run.value().id, domain::BillRunState::failed, "stopped", kUnknown, "").ok());

  w.gateway().set_bill(kDay, entries);
  const auto later = w.run(kDay);
  ASSERT_EQ(later.end, BillEnd::done) << later.detail;
  EXPECT_EQ(later.run->discrepancies, kUnknown + 1);
  for (const auto& payment : unknown) {
    EXPECT_EQ(w.discrepancies(payment, "unknown_payment"), 1) << payment;
  }
  EXPECT_EQ(w.discrepancies(missing, "missing_at_gateway"), 1);
  std::map<std::string, int> recorded_events;
  for (const auto& event : w.stores().all_events()) {
    if (event.type == "discrepancy.recorded") {
      ++recorded_events[event.payment_no];
    }
  }
  EXPECT_EQ(recorded_events.size(), static_cast<std::size_t>(kUnknown + 1));
  for (const auto& [payment, n] : recorded_events) {
    EXPECT_EQ(n, 1) << payment;
  }
  // Each transaction (one statement, one message of events) recorded at most a chunk's.
  EXPECT_LE(w.scalar("SELECT max(n) FROM (SELECT count(*) AS n FROM payment_discrepancy "
                     "GROUP BY xmin::text) t"),
            kChunk);
  EXPECT_GE(w.scalar("SELECT count(DISTINCT xmin::text) FROM payment_discrepancy"),
            (kUnknown + 1 + kChunk - 1) / kChunk);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

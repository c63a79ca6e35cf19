// Bill reconciliation below HTTP (SPEC §13) on the real PostgreSQL and Redis: every outcome of a
// day's hmac bill, the neighbouring days' rule, whole or nothing, an idempotent rerun, two runs of
// one channel and date, a crashed holder taken over, a bill that is not ready, and the items
// written in chunks (each row once; a run stopped between chunks keeps none).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "persistence/stores/status_sql.hpp"
#include "support/bill_world.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using actors::BillEnd;
using testing::bill_payment;
using testing::bill_refund;
using testing::BillWorld;
using testing::shanghai_ms;
using V = std::vector<std::string>;

const std::string kDay = "2026-11-20";
const std::string kNextDay = "2026-11-21";
const auto kMorning = shanghai_ms(kDay, 10, 0);

TEST(BillRunner, EveryOutcomeOfOneDay) {
  BillWorld w;
  const auto match = w.seed("match", 1, 1, 5000, "T-match", kMorning);
  const auto repair = w.pending("repair");
  const auto cancel = w.seed("cancel", 3, 2, 5000, "", 0);
  const auto amount = w.seed("amount", 1, 1, 5000, "T-amount", kMorning);
  const auto trade = w.seed("trade", 1, 1, 5000, "T-trade-here", kMorning);
  const auto dup = w.seed("dup", 1, 1, 5000, "T-dup-1", kMorning);
  const auto missing = w.seed("missing", 1, 1, 5000, "T-missing", kMorning);
  const auto refunded = w.seed("refunded", 4, 3, 5000, "T-refunded", kMorning);
  const auto no_refund = w.seed("no-refund", 4, 3, 5000, "T-no-refund", kMorning);
  const auto unknown = w.stores().id("P-unknown");
  w.gateway().set_bill(kDay, {bill_payment("T-match", match, 5000, kMorning),
                              bill_payment("T-repair", repair, 5000, kMorning),
                              bill_payment("T-cancel", cancel, 5000, kMorning),
                              bill_payment("T-unknown", unknown, 700, kMorning),
                              bill_payment("T-amount", amount, 4000, kMorning),
                              bill_payment("T-trade-there", trade, 5000, kMorning),
                              bill_payment("T-dup-1", dup, 5000, kMorning),
                              bill_payment("T-dup-2", dup, 5000, kMorning),
                              bill_payment("T-refunded", refunded, 5000, kMorning),
                              bill_refund("T-refunded", refunded, 5000, kMorning),
                              bill_refund("T-match", match, 5000, kMorning),
                              bill_payment("T-no-refund", no_refund, 5000, kMorning)});
  const auto result = w.run(kDay);
  ASSERT_EQ(result.end, BillEnd::done) << result.detail;
  ASSERT_TRUE(result.run);
  const auto id = result.run->id;
  EXPECT_EQ(result.run->state, "done");
  EXPECT_EQ(result.run->rows, 12);
  EXPECT_EQ(result.run->bill_sha256.size(), 64u);
  EXPECT_EQ(w.outcomes(id, match), V{"matched"});
  EXPECT_EQ(w.outcomes(id, repair), V{"repaired"});
  EXPECT_EQ(w.stores().payment_status(repair), 1);
  EXPECT_EQ(w.stores().channel_trade_no(repair), "T-repair");
  EXPECT_EQ(w.outcomes(id, cancel), V{"paid_after_cancel"});
  EXPECT_EQ(w.discrepancies(cancel, "paid_after_cancel"), 1);
  EXPECT_EQ(w.outcomes(id, unknown), V{"unknown_payment"});
  EXPECT_EQ(w.discrepancies(unknown, "unknown_payment"), 1);
  EXPECT_EQ(w.outcomes(id, amount), V{"amount_mismatch"});
  EXPECT_EQ(w.discrepancies(amount, "amount_mismatch"), 1);
  EXPECT_EQ(w.outcomes(id, trade), V{"trade_mismatch"});
  EXPECT_EQ(w.discrepancies(trade, "trade_mismatch"), 1);
  EXPECT_EQ(w.outcomes(id, dup), (V{"matched", "duplicate_trade"}));
  EXPECT_EQ(w.discrepancies(dup, "duplicate_trade"), 1);
  EXPECT_EQ(w.outcomes(id, missing), V{"missing_at_gateway"});
  EXPECT_EQ(w.discrepancies(missing, "missing_at_gateway"), 1);
  EXPECT_EQ(w.outcomes(id, refunded), V{"matched"});
  EXPECT_EQ(w.outcomes(id, refunded, "refund"), V{"matched"});
  EXPECT_EQ(w.outcomes(id, match, "refund"), V{"refund_unknown_here"});
  EXPECT_EQ(w.discrepancies(match, "refund_unknown_here"), 1);
  EXPECT_EQ(w.outcomes(id, no_refund, "refund"), V{"refund_missing_at_gateway"});
  EXPECT_EQ(w.discrepancies(no_refund, "refund_missing_at_gateway"), 1);
  EXPECT_EQ(result.run->matched, 5);
  EXPECT_EQ(result.run->repaired, 1);
  // Seven bill kinds and the paid_after_cancel the repair recorded.
  EXPECT_EQ(result.run->discrepancies, 8);
  // Every discrepancy item names its discrepancy (looked up when read).
  const auto items = w.store().items(id, "", 0, 1000);
  ASSERT_TRUE(items.ok()) << items.detail();
  for (const auto& item : items.value().items) {
    if (item.outcome != "matched" && item.outcome != "repaired") {
      EXPECT_TRUE(item.discrepancy_id) << item.outcome << ' ' << item.payment_no;
    }
  }
  EXPECT_EQ(w.runner().probe().runs(domain::Channel::hmac, "done"), 1u);
  EXPECT_EQ(w.runner().probe().items(domain::Channel::hmac, "matched"), 5u);
  EXPECT_EQ(result.run->counts.find("\"repair\""), std::string::npos) << result.run->counts;
}

TEST(BillRunner, RerunAppliesNothingTwiceAndOpensNothingTwice) {
  BillWorld w;
  const auto repair = w.pending("repair");
  const auto amount = w.seed("amount", 1, 1, 5000, "T-amount", kMorning);
  w.gateway().set_bill(kDay, {bill_payment("T-repair", repair, 5000, kMorning),
                              bill_payment("T-amount", amount, 4000, kMorning),
                              bill_payment("T-ghost", "ghost", 100, kMorning)});
  const auto first = w.run(kDay);
  ASSERT_EQ(first.end, BillEnd::done) << first.detail;
  const auto discrepancies = w.scalar("SELECT count(*) FROM payment_discrepancy");
  const auto events = w.stores().all_events().size();
  const auto second = w.run(kDay);
  ASSERT_EQ(second.end, BillEnd::done) << second.detail;
  EXPECT_NE(second.run->id, first.run->id);
  EXPECT_EQ(w.outcomes(second.run->id, repair), V{"matched"});
  EXPECT_EQ(w.scalar("SELECT count(*) FROM payment_discrepancy"), discrepancies);
  EXPECT_EQ(w.discrepancies("ghost", "unknown_payment"), 1);
  EXPECT_EQ(w.stores().all_events().size(), events);
  // Even a resolved discrepancy of that day is not opened again.
  pqxx::work tx(w.stores().pg());
  tx.exec("UPDATE payment_discrepancy SET resolved_at = now()");
  tx.commit();
  ASSERT_EQ(w.run(kDay).end, BillEnd::done);
  EXPECT_EQ(w.scalar("SELECT count(*) FROM payment_discrepancy"), discrepancies);
}

TEST(BillRunner, NeighbouringDaysDecideTheEdge) {
  BillWorld w;
  // Paid in the day's last minutes: the gateway may book them on the next day.
  const auto late = w.seed("late", 1, 1, 5000, "T-late", shanghai_ms(kDay, 23, 58));
  const auto lost = w.seed("lost", 1, 1, 5000, "T-lost", shanghai_ms(kDay, 23, 57));
  w.gateway().set_bill(kDay, {});
  w.gateway().set_bill(kNextDay, {bill_payment("T-late", late, 5000, shanghai_ms(kNextDay, 0, 1))});
  const auto day = w.run(kDay);
  ASSERT_EQ(day.end, BillEnd::done) << day.detail;
  // The next day has not run: the edge waits for it.
  EXPECT_TRUE(w.outcomes(day.run->id, late).empty());
  EXPECT_TRUE(w.outcomes(day.run->id, lost).empty());
  const auto next = w.run(kNextDay);
  ASSERT_EQ(next.end, BillEnd::done) << next.detail;
  EXPECT_EQ(w.outcomes(next.run->id, late), V{"matched"});
  EXPECT_EQ(w.outcomes(next.run->id, lost), V{"missing_at_gateway"});
  EXPECT_EQ(w.discrepancies(late, "missing_at_gateway"), 0);
  EXPECT_EQ(w.discrepancies(lost, "missing_at_gateway"), 1);
  // The day again, now that its next day is done: the late payment is found there.
  const auto again = w.run(kDay);
  ASSERT_EQ(again.end, BillEnd::done) << again.detail;
  EXPECT_TRUE(w.outcomes(again.run->id, late).empty());
  // The next day's run recorded the lost payment already: decided, not listed twice.
  EXPECT_TRUE(w.outcomes(again.run->id, lost).empty());
  EXPECT_EQ(w.discrepancies(lost, "missing_at_gateway"), 1);
}

// Money already recorded as taken for nothing is not run through the pipeline again: refunded
// through the gateway it is matched (and its refund row too), else it is that discrepancy.
TEST(BillRunner, MoneyAlreadyTakenForNothingIsNotRecordedAgain) {
  BillWorld w;
  const auto refunded = w.seed("refunded", 3, 2, 5000, "", 0);
  const auto open = w.seed("open", 3, 2, 5000, "", 0);
  {
    pqxx::work tx(w.stores().pg());
    const auto id = tx.exec_params1(
                          "INSERT INTO payment_discrepancy (payment_no, kind, resolved_at) "
                          "VALUES ($1, 'paid_after_cancel', now()) RETURNING id",
                          refunded)[0]
                        .as<std::int64_t>();
    tx.exec_params(
        "INSERT INTO refund (refund_no, payment_no, order_no, channel, amount_cents, source, "
        "  status, discrepancy_id, settled_at) "
        "SELECT $2, p.payment_no, p.order_no, 'hmac', 5000, 'discrepancy', $4, $1, "
        "  to_timestamp($3::bigint / 1000.0) "
        "FROM payment_order p WHERE p.payment_no = $5",
        id, w.stores().id("rfd"), kMorning,
        persistence::status_sql::code(domain::RefundStatus::succeeded), refunded);
    tx.exec_params(
        "INSERT INTO payment_discrepancy (payment_no, kind) VALUES ($1, "
        "'paid_after_cancel')",
        open);
    tx.commit();
  }
  w.gateway().set_bill(kDay, {bill_payment("T-refunded", refunded, 5000, kMorning),
                              bill_refund("T-refunded", refunded, 5000, kMorning),
                              bill_payment("T-open", open, 5000, kMorning)});
  const auto result = w.run(kDay);
  ASSERT_EQ(result.end, BillEnd::done) << result.detail;
  EXPECT_EQ(w.outcomes(result.run->id, refunded), V{"matched"});
  EXPECT_EQ(w.outcomes(result.run->id, refunded, "refund"), V{"matched"});
  EXPECT_EQ(w.outcomes(result.run->id, open), V{"paid_after_cancel"});
  EXPECT_EQ(w.discrepancies(refunded, "paid_after_cancel"), 1);
  EXPECT_EQ(w.discrepancies(open, "paid_after_cancel"), 1);
  EXPECT_EQ(w.stores().log_rows_for_payment(open), 0);
  EXPECT_EQ(w.stores().log_rows_for_payment(refunded), 0);
}

// Nothing of a bill that is not whole is applied or recorded; the run fails with the reason.
void expect_nothing_recorded(BillWorld& w, const actors::BillRunResult& result,
                             const std::string& repair, const std::string& reason) {
  EXPECT_EQ(result.end, BillEnd::failed);
  ASSERT_TRUE(result.run);
  EXPECT_EQ(result.run->state, "failed");
  EXPECT_NE(result.run->reason.find(reason), std::string::npos) << result.run->reason;
  EXPECT_EQ(result.run->rows, 0);
  EXPECT_EQ(w.scalar("SELECT count(*) FROM bill_item"), 0);
  EXPECT_EQ(w.scalar("SELECT count(*) FROM payment_discrepancy"), 0);
  EXPECT_EQ(w.stores().payment_status(repair), 0);
  EXPECT_EQ(w.runner().probe().runs(domain::Channel::hmac, "failed"), 1u);
}

TEST(BillRunner, ABadSignatureChangesNothing) {
  BillWorld w;
  const auto repair = w.pending("repair");
  const auto body = channels::hmac_bill_csv(
      {bill_payment("T-r", repair, 5000, kMorning), bill_payment("T-x", "ghost", 100, kMorning)});
  w.gateway().set_answer(kDay, 200, body, std::string(64, 'a'));
  expect_nothing_recorded(w, w.run(kDay), repair, "signature");
}

TEST(BillRunner, ARowThatDoesNotParseChangesNothing) {
  BillWorld w;
  const auto repair = w.pending("repair");
  // Two good rows reach the COPY before the third fails: the load is rolled back.
  auto body = channels::hmac_bill_csv(
      {bill_payment("T-r", repair, 5000, kMorning), bill_payment("T-x", "ghost", 100, kMorning)});
  body += "T-bad," + repair + ",payment,12.50,2026-11-20T02:00:00Z\n";
  w.gateway().set_answer(kDay, 200, body, w.gateway().sign(body));
  expect_nothing_recorded(w, w.run(kDay), repair, "line 4");
}

TEST(BillRunner, RowsOverTheLimitChangeNothing) {
  actors::BillSettings settings;
  settings.limits.rows_max = 2;
  BillWorld w(settings);
  const auto repair = w.pending("repair");
  w.gateway().set_bill(kDay, {bill_payment("T-r", repair, 5000, kMorning),
                              bill_payment("T-x", "ghost", 100, kMorning),
                              bill_payment("T-y", "ghost2", 100, kMorning)});
  expect_nothing_recorded(w, w.run(kDay), repair, "SEATFLOW_BILL_ROWS_MAX");
}

TEST(BillRunner, BytesOverTheLimitChangeNothing) {
  actors::BillSettings settings;
  settings.limits.bytes_max = 100;
  BillWorld w(settings);
  const auto repair = w.pending("repair");
  w.gateway().set_bill(kDay, {bill_payment("T-r", repair, 5000, kMorning),
                              bill_payment("T-x", "ghost", 100, kMorning)});
  const auto result = w.run(kDay);
  // The client refuses the answer before the dialect reads it, or the dialect refuses it.
  expect_nothing_recorded(w, result, repair, "");
  EXPECT_EQ(result.run->state, "failed");
}

TEST(BillRunner, NotReadyIsRecordedAndChangesNothing) {
  BillWorld w;
  const auto repair = w.pending("repair");
  w.gateway().set_answer(kDay, 425, "making it", "");
  const auto result = w.run(kDay);
  EXPECT_EQ(result.end, BillEnd::not_ready);
  ASSERT_TRUE(result.run);
  EXPECT_EQ(result.run->state, "not_ready");
  EXPECT_EQ(w.stores().payment_status(repair), 0);
  // The schedule would try again: no done run, one attempt, its retry time passed.
  const auto due = w.store().due("hmac", kDay, 12, 0);
  ASSERT_TRUE(due.ok());
  EXPECT_TRUE(due.value());
}

TEST(BillRunner, ADayWithoutTradesIsAnEmptyBill) {
  BillWorld w;
  const auto result = w.run(kDay);  // the fake answers 404
  ASSERT_EQ(result.end, BillEnd::done) << result.detail;
  EXPECT_EQ(result.run->rows, 0);
  EXPECT_EQ(result.run->discrepancies, 0);
  const auto due = w.store().due("hmac", kDay, 12, 0);
  ASSERT_TRUE(due.ok());
  EXPECT_FALSE(due.value());
}

TEST(BillRunner, TwoRunsOfOneChannelAndDateNeverRunAtOnce) {
  BillWorld w;
  auto held = w.store().open("hmac", kDay, 600'000);
  ASSERT_TRUE(held.ok()) << held.detail();
  const auto refused = w.run(kDay);
  EXPECT_EQ(refused.end, BillEnd::refused);
  EXPECT_FALSE(refused.run);
  EXPECT_EQ(w.gateway().requests(), 0);
  // Another date runs meanwhile.
  EXPECT_EQ(w.run(kNextDay).end, BillEnd::done);
}

// Runs a statement and commits; the rows it changed.
std::int64_t write(BillWorld& w, const std::string& sql) {
  pqxx::work tx(w.stores().pg());
  const auto changed = tx.exec(sql).affected_rows();
  tx.commit();
  return static_cast<std::int64_t>(changed);
}

TEST(BillRunner, ARunWhoseHolderCrashedIsTakenOver) {
  BillWorld w;
  auto held = w.store().open("hmac", kDay, 1);
  ASSERT_TRUE(held.ok()) << held.detail();
  const auto old_id = std::to_string(held.value().id);
  // The chunk its holder wrote before it crashed.
  EXPECT_EQ(w.scalar("WITH i AS (INSERT INTO bill_item (run_id, seq, outcome, kind, payment_no, "
                     "trade_no) VALUES (" +
                     old_id +
                     ", 1, 'matched', 'payment', 'P-x', 'T-x') RETURNING 1) "
                     "SELECT count(*) FROM i"),
            1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto result = w.run(kDay);
  ASSERT_EQ(result.end, BillEnd::done) << result.detail;
  const auto old = w.store().run(held.value().id);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old.value().state, "failed");
  EXPECT_EQ(old.value().reason, "abandoned");
  EXPECT_EQ(w.scalar("SELECT count(*) FROM bill_item WHERE run_id = " + old_id), 0);
}

// `count` SUCCESS payments paid in the morning (trade T<payment>), seeded in one statement each as
// a bulk load would; their numbers.
std::vector<std::string> seed_paid(BillWorld& w, const std::string& name, int count) {
  const auto prefix = w.stores().id(name);
  const auto n = std::to_string(count);
  const auto at = std::to_string(kMorning);
  EXPECT_EQ(write(w,
                  "INSERT INTO order_info (order_no, user_id, show_id, seat_ids, "
                  "amount_cents, status, expires_at, paid_at) SELECT 'O" +
                      prefix + "-' || g, 'u', 'S" + prefix +
                      "', ARRAY['R' || g], 5000, 1, now() + interval '1 day', to_timestamp(" + at +
                      " / 1000.0) FROM generate_series(1, " + n + ") g"),
            count);
  EXPECT_EQ(
      write(w,
            "INSERT INTO payment_order (payment_no, order_no, channel, "
            "amount_cents, status, channel_trade_no, paid_at) SELECT 'P" +
                prefix + "-' || g, 'O" + prefix + "-' || g, 'hmac', 5000, 1, 'TP" + prefix +
                "-' || g, to_timestamp(" + at + " / 1000.0) FROM generate_series(1, " + n + ") g"),
      count);
  std::vector<std::string> out;
  for (int i = 1; i <= count; ++i) {
    out.push_back("P" + prefix + "-" + std::to_string(i));
  }
  return out;
}

std::vector<channels::HmacBillEntry> bill_of(const std::vector<std::string>& payments) {
  std::vector<channels::HmacBillEntry> entries;
  for (const auto& payment : payments) {
    entries.push_back(bill_payment("T" + payment, payment, 5000, kMorning));
  }
  return entries;
}

// Enough rows for several pages of the matching's table, so chunks of one page are several.
constexpr int kChunkedRows = 400;

TEST(BillRunner, ItemsAreWrittenInChunksEachRowOnce) {
  actors::BillSettings settings;
  settings.item_chunk_rows = 1;
  settings.work_share_pct = 100;
  BillWorld w(settings);
  auto entries = bill_of(seed_paid(w, "bulk", kChunkedRows));
  const auto repair = w.pending("repair");
  const auto amount = w.seed("amount", 1, 1, 5000, "T-amount", kMorning);
  entries.push_back(bill_payment("T-repair", repair, 5000, kMorning));
  entries.push_back(bill_payment("T-amount", amount, 4000, kMorning));
  w.gateway().set_bill(kDay, entries);
  const auto result = w.run(kDay);
  ASSERT_EQ(result.end, BillEnd::done) << result.detail;
  const auto id = result.run->id;
  const auto run = " WHERE run_id = " + std::to_string(id);
  EXPECT_EQ(result.run->rows, kChunkedRows + 2);
  EXPECT_EQ(result.run->matched, kChunkedRows);
  EXPECT_EQ(result.run->repaired, 1);
  EXPECT_EQ(result.run->discrepancies, 1);
  EXPECT_EQ(w.scalar("SELECT count(*) FROM bill_item" + run), kChunkedRows + 2);
  EXPECT_EQ(w.scalar("SELECT count(DISTINCT seq) FROM bill_item" + run), kChunkedRows + 2);
  // Written by several transactions, not one.
  EXPECT_GT(w.scalar("SELECT count(DISTINCT xmin::text) FROM bill_item" + run), 2);
  EXPECT_EQ(w.outcomes(id, repair), V{"repaired"});
  EXPECT_EQ(w.outcomes(id, amount), V{"amount_mismatch"});
  EXPECT_EQ(w.discrepancies(amount, "amount_mismatch"), 1);
  // A matched item stores no detail; it is read back as the matching saw it.
  EXPECT_EQ(w.scalar("SELECT count(*) FROM bill_item" + run +
                     " AND outcome = 'matched' AND detail = '{}'::jsonb"),
            kChunkedRows);
  const auto page = w.store().items(id, "matched", 0, 1);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page.value().items.size(), 1u);
  const auto& item = page.value().items.front();
  const auto detail = nlohmann::json::parse(item.detail);
  EXPECT_EQ(detail.value("source", ""), "bill");
  EXPECT_EQ(detail.value("channel", ""), "hmac");
  EXPECT_EQ(detail.value("billDate", ""), kDay);
  EXPECT_EQ(detail.value("runId", std::int64_t{0}), id);
  EXPECT_EQ(detail.value("tradeNo", ""), item.trade_no);
  EXPECT_EQ(detail.value("localTradeNo", ""), item.trade_no);
  EXPECT_EQ(detail.value("localStatus", 0), 1);
  EXPECT_EQ(detail.value("gatewayAmountCents", 0), 5000);
  EXPECT_EQ(detail.value("localAmountCents", 0), 5000);
  // The other outcomes keep the detail they were written with.
  const auto mismatch = w.store().items(id, "amount_mismatch", 0, 1);
  ASSERT_TRUE(mismatch.ok());
  ASSERT_EQ(mismatch.value().items.size(), 1u);
  EXPECT_EQ(
      nlohmann::json::parse(mismatch.value().items.front().detail).value("localAmountCents", 0),
      5000);
}

TEST(BillRunner, ARunStoppedBetweenChunksKeepsNothing) {
  actors::BillSettings settings;
  settings.item_chunk_rows = 1;
  settings.work_share_pct = 1;  // long rests between chunks: the stop lands in one
  BillWorld w(settings);
  auto entries = bill_of(seed_paid(w, "bulk", kChunkedRows));
  const auto repair = w.pending("repair");
  entries.push_back(bill_payment("T-repair", repair, 5000, kMorning));
  entries.push_back(bill_payment("T-ghost", w.stores().id("ghost"), 100, kMorning));
  w.gateway().set_bill(kDay, entries);
  std::thread stopper([&w] {
    // Stops once the first chunk is committed.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (w.scalar("SELECT count(*) FROM bill_item") == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    w.runner().request_stop();
  });
  const auto result = w.run(kDay);
  stopper.join();
  EXPECT_EQ(result.end, BillEnd::failed);
  EXPECT_EQ(result.detail, "the engine stopped during the run");
  ASSERT_TRUE(result.run);
  EXPECT_EQ(result.run->state, "failed");
  EXPECT_EQ(w.scalar("SELECT count(*) FROM bill_item"), 0);
  EXPECT_EQ(w.scalar("SELECT count(*) FROM payment_discrepancy"), 0);
  EXPECT_EQ(w.stores().payment_status(repair), 0);
  // Every later run ends at once.
  EXPECT_EQ(w.run(kNextDay).end, BillEnd::failed);
}

TEST(BillRunner, ItemsPageByCursorAndFilterByOutcome) {
  BillWorld w;
  std::vector<channels::HmacBillEntry> entries;
  for (int i = 0; i < 5; ++i) {
    entries.push_back(
        bill_payment("T-" + std::to_string(i), "ghost-" + std::to_string(i), 100, kMorning));
  }
  w.gateway().set_bill(kDay, entries);
  const auto result = w.run(kDay);
  ASSERT_EQ(result.end, BillEnd::done) << result.detail;
  const auto first = w.store().items(result.run->id, "unknown_payment", 0, 3);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first.value().items.size(), 3u);
  ASSERT_TRUE(first.value().next_cursor);
  const auto second =
      w.store().items(result.run->id, "unknown_payment", *first.value().next_cursor, 3);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.value().items.size(), 2u);
  EXPECT_FALSE(second.value().next_cursor);
  EXPECT_TRUE(w.store().items(result.run->id, "matched", 0, 3).value().items.empty());
  EXPECT_EQ(w.store().items(result.run->id + 100, "", 0, 3).error(), persistence::errc::not_found);
}

// A gateway that holds its answer: the stop ends the download at once (the socket closed under
// it), not when the gateway answers or the fetch times out.
TEST(BillRunner, AStopEndsADownloadInProgress) {
  constexpr int kStallMs = 4000;
  actors::BillSettings settings;
  settings.fetch_timeout_ms = 60'000;
  BillWorld w(settings);
  w.gateway().set_bill(kDay, {bill_payment("T-ghost", w.stores().id("ghost"), 100, kMorning)});
  w.gateway().set_delay_ms(kStallMs);
  std::thread stopper([&w] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (w.gateway().requests() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    w.runner().request_stop();
  });
  const auto started = std::chrono::steady_clock::now();
  const auto result = w.run(kDay);
  const auto took = std::chrono::steady_clock::now() - started;
  stopper.join();
  EXPECT_EQ(result.end, BillEnd::failed);
  EXPECT_EQ(result.detail, "the engine stopped during the run");
  // Ended while the gateway still held its answer.
  EXPECT_LT(took, std::chrono::milliseconds(kStallMs));
  EXPECT_EQ(w.scalar("SELECT count(*) FROM bill_item"), 0);
  EXPECT_EQ(w.scalar("SELECT count(*) FROM payment_discrepancy"), 0);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

// Bill runs that end, through the real binary (SPEC §13): a day that has not ended is refused by
// the CLI and the API before anything is opened or fetched; a later run that matches a payment
// resolves what an earlier run found missing or unknown of it; a run interrupted by a stop is
// written failed with no items, one left by a crash (kill -9) is failed by its engine restarted,
// and another engine runs the day within the short lease; the hmac bill streams (a large unsigned
// body fails whole, the engine's peak RSS bounded); argument errors exit 2.
#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/bill_world.hpp"
#include "support/engine_fixture.hpp"
#include "support/fake_hmac_bill.hpp"
#include "support/payment_checks.hpp"
#include "support/process.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "functional-bill-lifecycle-token-3c9d";
const std::string kDay = "2026-11-20";
const auto kMorning = shanghai_ms(kDay, 10, 0);

// An engine on its own database and the fake gateway, with the API token.
EnvOverrides engine_extra(const PrivateDatabase& db, const FakeHmacBill& gateway) {
  return {{"SEATFLOW_API_TOKEN", kToken},
          {"SEATFLOW_PG_DSN", db.dsn()},
          {"SEATFLOW_EVENT_SLOT", db.slot()},
          {"SEATFLOW_HMAC_GATEWAY_URL", gateway.url()}};
}

ExitResult reconcile_bill(const EnvOverrides& env, const std::string& date = kDay) {
  return run_to_exit({"reconcile-bill", "--channel", "hmac", "--date", date}, env);
}

Response start(const TestEngine& engine, const std::string& date = kDay) {
  return engine.api("POST", "/api/bill-runs", kToken,
                    json{{"channel", "hmac"}, {"date", date}}.dump());
}

std::int64_t scalar(Stores& stores, const std::string& sql) {
  pqxx::work tx(stores.pg());
  const auto row = tx.exec1(sql);
  tx.commit();
  return row[0].is_null() ? 0 : row[0].as<std::int64_t>();
}

std::string text(Stores& stores, const std::string& sql) {
  pqxx::work tx(stores.pg());
  const auto row = tx.exec1(sql);
  tx.commit();
  return row[0].is_null() ? std::string() : row[0].as<std::string>();
}

// Today in Asia/Shanghai (the hmac bill's zone by default): a day that has not ended.
std::string today(Stores& stores) {
  return text(stores, "SELECT (now() AT TIME ZONE 'Asia/Shanghai')::date::text");
}

// A payment of kDay in `status` (1 SUCCESS, 4 REFUNDED) with trade `trade`.
std::string paid(Stores& stores, const std::string& name, const std::string& trade,
                 int status = 1) {
  const auto payment = stores.id(name);
  stores.create_order(stores.id(name + "-o"), stores.id("show"), {name}, 5000, status == 4 ? 3 : 1);
  stores.create_payment(payment, stores.id(name + "-o"), "hmac", 5000, status);
  pqxx::work tx(stores.pg());
  tx.exec_params(
      "UPDATE payment_order SET channel_trade_no = $2, paid_at = to_timestamp($3::bigint / "
      "1000.0), updated_at = to_timestamp($3::bigint / 1000.0) WHERE payment_no = $1",
      payment, trade, kMorning);
  tx.commit();
  return payment;
}

// The engine's peak resident set (VmHWM) in kB, 0 when it cannot be read.
std::int64_t peak_rss_kb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) {
      std::istringstream fields(line.substr(6));
      std::int64_t kb = 0;
      fields >> kb;
      return kb;
    }
  }
  return 0;
}

TEST(BillLifecycleCli, ArgumentErrorsExitTwo) {
  const auto unknown_option = run_to_exit({"reconcile-bill", "--channel", "hmac", "--bogus"});
  EXPECT_EQ(unknown_option.exit_code, 2) << unknown_option.output;
  const auto missing_argument = run_to_exit({"query"});
  EXPECT_EQ(missing_argument.exit_code, 2) << missing_argument.output;
  const auto unknown_command = run_to_exit({"no-such-command"});
  EXPECT_EQ(unknown_command.exit_code, 2) << unknown_command.output;
  const auto no_command = run_to_exit({});
  EXPECT_EQ(no_command.exit_code, 2) << no_command.output;
  const auto no_value = run_to_exit({"reconcile-bill", "--channel"});
  EXPECT_EQ(no_value.exit_code, 2) << no_value.output;
  const auto help = run_to_exit({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help.output;
}

// Today (and a day to come) is refused before a run is opened or the gateway asked: its partial
// bill would report every payment it lacks as missing at the gateway.
TEST(BillLifecycleCli, ADayThatHasNotEndedIsRefusedBeforeAnythingIsFetched) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeHmacBill gateway(kBillSecret);
  const auto day = today(stores);
  paid(stores, "today", "T-today");
  gateway.set_bill(day, {});
  for (const auto& date : {day, std::string("2099-01-01")}) {
    const auto refused = reconcile_bill(bill_cli_env(db, gateway.url()), date);
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_NE(refused.output.find("has not ended: it can be reconciled from "), std::string::npos)
        << refused.output;
    EXPECT_NE(refused.output.find("Z (its end in Asia/Shanghai plus SEATFLOW_BILL_EDGE_MS)"),
              std::string::npos)
        << refused.output;
  }
  EXPECT_EQ(gateway.requests(), 0);
  EXPECT_EQ(scalar(stores, "SELECT count(*) FROM bill_run"), 0);
  EXPECT_EQ(scalar(stores, "SELECT count(*) FROM payment_discrepancy"), 0);
}

TEST(BillLifecycleApi, ADayThatHasNotEndedIsRefusedWith409) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeHmacBill gateway(kTestSecret);
  TestEngine engine(engine_extra(db, gateway));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto day = today(stores);
  paid(stores, "today", "T-today");
  gateway.set_bill(day, {});
  const auto refused = start(engine, day);
  EXPECT_EQ(refused.status, 409) << refused.body;
  const auto error = json::parse(refused.body, nullptr, false).value("error", "");
  EXPECT_NE(error.find("the bill day " + day + " has not ended: it can be reconciled from "),
            std::string::npos)
      << refused.body;
  // Midnight ending the day in Asia/Shanghai (16:00 UTC) plus the default edge of 15 minutes.
  EXPECT_NE(error.find("T16:15:00.000Z"), std::string::npos) << refused.body;
  EXPECT_EQ(start(engine, "2099-01-01").status, 409);
  EXPECT_EQ(gateway.requests(), 0);
  EXPECT_EQ(scalar(stores, "SELECT count(*) FROM bill_run"), 0);
}

// What a run found missing at the gateway or unknown here, and a refund either side lacked, is
// resolved by the later run that matches it, naming that run.
TEST(BillLifecycleCli, ALaterRunThatMatchesResolvesWhatAnEarlierRunFound) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeHmacBill gateway(kBillSecret);
  const auto env = bill_cli_env(db, gateway.url());
  const auto late = paid(stores, "late", "T-late");                 // missing, then listed
  const auto ghost = stores.id("ghost");                            // unknown, then paid here
  const auto refunded = paid(stores, "refunded", "T-refunded", 4);  // refund missing, then listed
  const auto refund_here = paid(stores, "refund-here", "T-refund-here");  // refund unknown here
  gateway.set_bill(kDay, {bill_payment("T-ghost", ghost, 5000, kMorning),
                          bill_payment("T-refunded", refunded, 5000, kMorning),
                          bill_payment("T-refund-here", refund_here, 5000, kMorning),
                          bill_refund("T-refund-here", refund_here, 5000, kMorning)});
  const auto first = reconcile_bill(env);
  ASSERT_EQ(first.exit_code, 1) << first.output;
  const auto open_of = [&](const std::string& payment, const std::string& kind) {
    return scalar(stores, "SELECT count(*) FROM payment_discrepancy WHERE payment_no = '" +
                              payment + "' AND kind = '" + kind + "' AND resolved_at IS NULL");
  };
  ASSERT_EQ(open_of(late, "missing_at_gateway"), 1) << first.output;
  ASSERT_EQ(open_of(ghost, "unknown_payment"), 1) << first.output;
  ASSERT_EQ(open_of(refunded, "refund_missing_at_gateway"), 1) << first.output;
  ASSERT_EQ(open_of(refund_here, "refund_unknown_here"), 1) << first.output;

  // The gateway's books and ours now agree on all four.
  paid(stores, "ghost", "T-ghost");
  {
    pqxx::work tx(stores.pg());
    tx.exec_params("UPDATE payment_order SET status = 4 WHERE payment_no = $1", refund_here);
    tx.commit();
  }
  gateway.set_bill(kDay, {bill_payment("T-late", late, 5000, kMorning),
                          bill_payment("T-ghost", ghost, 5000, kMorning),
                          bill_payment("T-refunded", refunded, 5000, kMorning),
                          bill_refund("T-refunded", refunded, 5000, kMorning),
                          bill_payment("T-refund-here", refund_here, 5000, kMorning),
                          bill_refund("T-refund-here", refund_here, 5000, kMorning)});
  const auto second = reconcile_bill(env);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  const auto run = scalar(stores, "SELECT max(id) FROM bill_run WHERE state = 'done'");
  for (const auto& [payment, kind] :
       {std::pair{late, "missing_at_gateway"}, std::pair{ghost, "unknown_payment"},
        std::pair{refunded, "refund_missing_at_gateway"},
        std::pair{refund_here, "refund_unknown_here"}}) {
    SCOPED_TRACE(std::string(kind));
    EXPECT_EQ(open_of(payment, kind), 0) << second.output;
    EXPECT_EQ(text(stores,
                   "SELECT detail ->> 'resolvedBy' FROM payment_discrepancy WHERE payment_no = '" +
                       payment + "' AND kind = '" + kind + "'"),
              "bill run " + std::to_string(run));
  }
  // A third run opens nothing again and resolves nothing more.
  EXPECT_EQ(reconcile_bill(env).exit_code, 0);
  EXPECT_EQ(scalar(stores, "SELECT count(*) FROM payment_discrepancy"), 4);
}

// The bill of `rows` payments nobody here knows, each in its own line.
std::vector<channels::HmacBillEntry> unknown_bill(const std::string& prefix, int rows) {
  std::vector<channels::HmacBillEntry> entries;
  entries.reserve(static_cast<std::size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    entries.push_back(bill_payment("T" + prefix + std::to_string(i),
                                   prefix + "-unknown-" + std::to_string(i), 100, kMorning));
  }
  return entries;
}

// A stop while the run writes its items (ten chunks of 10 000 rows at the default work share, each
// followed by a rest) ends it failed, its items deleted, before the stores are cut. A lower share
// made the rest before the first chunk outlast the test's wait on a machine busy with builds (the
// pacer rests eight times longer then), most of all under a sanitizer.
TEST(BillLifecycleApi, AStopMidRunLeavesItFailedWithNoItems) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeHmacBill gateway(kTestSecret);
  TestEngine engine(engine_extra(db, gateway));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  gateway.set_bill(kDay, unknown_bill(stores.prefix(), 100'000));
  const auto started = start(engine);
  ASSERT_EQ(started.status, 202) << started.body;
  const auto id = json::parse(started.body).at("id").get<std::int64_t>();
  ASSERT_TRUE(wait_until(
      [&] {
        return scalar(stores,
                      "SELECT count(*) FROM bill_item WHERE run_id = " + std::to_string(id)) > 0;
      },
      120s))  // a bound for a ThreadSanitizer build on a busy machine; a Release one takes ~1 s
      << engine.log();
  EXPECT_EQ(engine.process().stop(10s), 0) << engine.log();
  EXPECT_EQ(text(stores, "SELECT state FROM bill_run WHERE id = " + std::to_string(id)), "failed")
      << engine.log();
  EXPECT_EQ(text(stores, "SELECT reason FROM bill_run WHERE id = " + std::to_string(id)),
            "the engine stopped during the run");
  EXPECT_EQ(scalar(stores, "SELECT count(*) FROM bill_item WHERE run_id = " + std::to_string(id)),
            0);
  EXPECT_EQ(scalar(stores, "SELECT count(*) FROM payment_discrepancy"), 0);
  // No statement of the run is left running on the server.
  EXPECT_EQ(scalar(stores,
                   "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                   "AND application_name = 'seatflow' AND state = 'active'"),
            0);
}

// An engine killed while its run fetches: the same engine started again fails the run at once.
TEST(BillLifecycleApi, AnEngineKilledMidRunFailsItsRunWhenItStartsAgain) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeHmacBill gateway(kTestSecret);
  gateway.set_bill(kDay, {bill_payment("T-late", stores.id("late"), 5000, kMorning)});
  // The gateway answers one request at a time: the killed engine's holds it this long.
  gateway.set_delay_ms(15'000);
  std::int64_t id = 0;
  std::uint16_t port = 0;
  {
    TestEngine engine(engine_extra(db, gateway));
    ASSERT_TRUE(engine.healthy()) << engine.log();
    port = engine.port();
    const auto started = start(engine);
    ASSERT_EQ(started.status, 202) << started.body;
    id = json::parse(started.body).at("id").get<std::int64_t>();
    ASSERT_TRUE(wait_until([&] { return gateway.requests() > 0; }, 10s));
    engine.process().signal(SIGKILL);
    EXPECT_EQ(engine.process().wait_exit(5s), 128 + SIGKILL);
  }
  const auto state = [&] {
    return text(stores, "SELECT state || ' ' || COALESCE(reason, '') FROM bill_run WHERE id = " +
                            std::to_string(id));
  };
  ASSERT_EQ(state(), "running ");
  auto env = engine_env(port);
  for (const auto& [name, value] : engine_extra(db, gateway)) {
    env[name] = value;
  }
  EngineProcess again({"serve"}, env);
  ASSERT_TRUE(again.wait_healthy(port, 15s)) << again.log();
  EXPECT_EQ(state(), "failed abandoned: its engine restarted") << again.log();
  EXPECT_EQ(again.stop(10s), 0) << again.log();
}

// Another engine takes a crashed engine's run over within the short lease (not hours later).
TEST(BillLifecycleApi, ARunAfterACrashStartsWithinTheShortLease) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeHmacBill gateway(kTestSecret);
  gateway.set_bill(kDay, {});
  gateway.set_delay_ms(20'000);
  {
    TestEngine engine(engine_extra(db, gateway));
    ASSERT_TRUE(engine.healthy()) << engine.log();
    ASSERT_EQ(start(engine).status, 202);
    ASSERT_TRUE(wait_until([&] { return gateway.requests() > 0; }, 10s));
    engine.process().signal(SIGKILL);
    EXPECT_EQ(engine.process().wait_exit(5s), 128 + SIGKILL);
  }
  const auto killed_at = std::chrono::steady_clock::now();
  gateway.set_delay_ms(0);
  TestEngine other(engine_extra(db, gateway));
  ASSERT_TRUE(other.healthy()) << other.log();
  Response taken;
  ASSERT_TRUE(wait_until(
      [&] {
        taken = start(other);
        return taken.status == 202;
      },
      45s))
      << taken.status << ' ' << taken.body;
  EXPECT_LT(std::chrono::steady_clock::now() - killed_at, 45s);
  EXPECT_EQ(text(stores, "SELECT reason FROM bill_run ORDER BY id LIMIT 1"), "abandoned");
}

// A large hmac bill with a signature that does not verify: streamed, never held whole, and
// nothing of it recorded.
TEST(BillLifecycleApi, ALargeUnsignedHmacBillIsVerifiedAsItStreams) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeHmacBill gateway(kTestSecret);
  auto extra = engine_extra(db, gateway);
  extra["SEATFLOW_BILL_WORK_SHARE_PCT"] = "100";
  TestEngine engine(extra);
  ASSERT_TRUE(engine.healthy()) << engine.log();
  // Rows of long ids: about 150 MB in about 570 000 rows.
  std::string body(channels::kHmacBillHeader);
  body += '\n';
  const std::string pad(100, 'x');
  for (int i = 0; body.size() < 150u * 1024 * 1024; ++i) {
    body += "T" + std::to_string(i) + pad + ",P" + std::to_string(i) +
            ",payment,100,2026-11-20T02:00:00Z\n";
  }
  const auto body_mb = static_cast<std::int64_t>(body.size() / (1024 * 1024));
  gateway.set_answer(kDay, 200, std::move(body), std::string(64, '0'));
  const auto before_kb = peak_rss_kb(engine.process().pid());
  ASSERT_GT(before_kb, 0);
  const auto started = start(engine);
  ASSERT_EQ(started.status, 202) << started.body;
  const auto id = json::parse(started.body).at("id").get<std::int64_t>();
  json run;
  ASSERT_TRUE(wait_until(
      [&] {
        const auto r = engine.api("GET", "/api/bill-runs/" + std::to_string(id), kToken);
        run = json::parse(r.body, nullptr, false);
        return r.status == 200 && run.value("state", "") != "running";
      },
      120s))
      << engine.log();
  EXPECT_EQ(run.value("state", ""), "failed") << run.dump();
  EXPECT_EQ(run.value("reason", ""), "the bill's signature does not verify") << run.dump();
  EXPECT_EQ(run.value("rows", -1), 0) << run.dump();
  EXPECT_EQ(scalar(stores, "SELECT count(*) FROM bill_item"), 0);
  EXPECT_EQ(scalar(stores, "SELECT count(*) FROM payment_discrepancy"), 0);
  const auto after_kb = peak_rss_kb(engine.process().pid());
  RecordProperty("peak_rss_mb_before", static_cast<int>(before_kb / 1024));
  RecordProperty("peak_rss_mb_after", static_cast<int>(after_kb / 1024));
  RecordProperty("body_mb", static_cast<int>(body_mb));
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Under a sanitizer the engine's memory is the sanitizer's too (shadow memory, a quarantine of
  // freed blocks): the Release suite holds the bound.
  std::cout << "[ note ] peak RSS not bounded under a sanitizer (" << before_kb / 1024 << " MB → "
            << after_kb / 1024 << " MB)\n";
#else
  // Held whole, the body alone would add its own size (and the parser's copy of it).
  EXPECT_LT((after_kb - before_kb) / 1024, body_mb / 4)
      << "peak RSS " << before_kb / 1024 << " MB → " << after_kb / 1024 << " MB for a " << body_mb
      << " MB body";
  EXPECT_LE(after_kb / 1024, 256);
#endif
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

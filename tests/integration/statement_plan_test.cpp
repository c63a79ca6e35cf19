// The callback path's statements keep their plan on any statistics: on tables bulk-loaded the way
// users load them (INSERT … SELECT, no ANALYZE, autovacuum off so none happens behind the test's
// back), and on statistics gone stale (analysed small, then grown), EXPLAIN of every hot prepared
// statement with a realistic 64-key array must reach its rows by primary key: no sequential scan
// of a big table, no partial or secondary index, no BitmapAnd. The old order CAS
// (`order_no = ANY($1) AND status = 0`, which ANDed the primary key with the partial pending index
// and read every pending order) is the control: on the never-analysed tables the same check must
// refuse it (with stale statistics the planner happens to choose well for it).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <set>
#include <string>
#include <vector>

#include "persistence/stores/sql.hpp"
#include "support/plan_tree.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

constexpr int kRows = 200'000;
constexpr int kKeys = 64;

const std::set<std::string> kBigTables = {"order_info", "payment_order", "seat_claim",
                                          "payment_callback_log", "payment_discrepancy"};
const std::set<std::string> kKeyIndexes = {
    "order_info_pkey", "payment_order_pkey", "payment_callback_log_pkey", "seat_claim_pkey",
    "payment_discrepancy_pkey",
    // The payment of an order, looked up by the one-payment-per-order key.
    "payment_order_order_no_key"};

// Rows reached other than by key, in a plan tree; empty when every scan is by key.
void find_bad_scans(const nlohmann::json& node, std::vector<std::string>& bad) {
  const auto type = node.value("Node Type", "");
  const auto relation = node.value("Relation Name", "");
  const auto index = node.value("Index Name", "");
  if (type == "BitmapAnd" || type == "BitmapOr") {
    bad.push_back(type);
  }
  // A Tid Scan reaches its rows by address (the moves address the rows their locks returned).
  if (type != "ModifyTable" && kBigTables.count(relation) > 0 && index.empty() &&
      type != "Bitmap Heap Scan" && type != "Tid Scan") {
    bad.push_back(type + " on " + relation);
  }
  if (!index.empty() && kKeyIndexes.count(index) == 0) {
    bad.push_back(type + " using " + index);
  }
  if (node.contains("Plans")) {
    for (const auto& child : node["Plans"]) {
      find_bad_scans(child, bad);
    }
  }
}

std::string array_of(const std::string& prefix, int from, int count) {
  std::string out = "{";
  for (int i = 0; i < count; ++i) {
    out += (i > 0 ? "," : "") + prefix + std::to_string(from + i * 997 % kRows);
  }
  return out + "}";
}

std::string repeated(const std::string& value, int count) {
  std::string out = "{";
  for (int i = 0; i < count; ++i) {
    out += (i > 0 ? "," : "") + value;
  }
  return out + "}";
}

// Each hot statement with realistic arguments (64 keys that exist), as SQL literals.
std::vector<std::pair<std::string_view, std::vector<std::string>>> hot_statements() {
  namespace sql = persistence::sql;
  const auto payments = array_of("p", 1, kKeys);
  const auto orders = array_of("o", 1, kKeys);
  const auto logs = array_of("c", 5, kKeys);
  const auto zeros = repeated("0", kKeys);
  const auto ones = repeated("1", kKeys);
  const auto twos = repeated("2", kKeys);
  const auto texts = repeated("x", kKeys);
  std::string row_ids = "{";
  for (int i = 0; i < kKeys; ++i) {
    row_ids += (i > 0 ? ",\"(" : "\"(") + std::to_string(i) + ",1)\"";
  }
  row_ids += "}";
  return {
      {sql::kBatchLockPaymentsAndOrders, {payments}},
      {sql::kBatchUpsertLogs,
       {logs, repeated("hmac", kKeys), payments, ones, texts, repeated("applied", kKeys),
        repeated("200", kKeys), repeated("ab", kKeys), repeated("\"{}\"", kKeys)}},
      {sql::kBatchMoveSucceededAndPaid,
       {payments, zeros, ones, texts, row_ids, orders, zeros, ones, payments, row_ids}},
      {sql::kBatchMovePaymentsFailed, {payments, zeros, twos, row_ids}},
      {sql::kBatchInsertDiscrepancies,
       {payments, orders, repeated("paid_after_cancel", kKeys), repeated("\"{}\"", kKeys)}},
      {sql::kBatchAddDuplicates, {logs, ones}},
      {sql::kBatchPaidOrdersOf, {payments, "1", "1"}},
  };
}

std::string text_of(std::string_view name) {
  for (const auto& statement : persistence::sql::statements()) {
    if (statement.name == name) {
      return statement.text;
    }
  }
  ADD_FAILURE() << "no statement " << name;
  return {};
}

// Whether a plan tree reaches `relation` by a Tid Scan.
bool has_tid_scan(const nlohmann::json& plan, const std::string& relation) {
  return testing::any_plan_node(plan, [&relation](const nlohmann::json& node) {
    return node.value("Node Type", "") == "Tid Scan" && node.value("Relation Name", "") == relation;
  });
}

// The plan trees of the prepared `text` with `args`, by plan cache mode (generic, then custom).
std::vector<std::pair<std::string, nlohmann::json>> plans_of(pqxx::connection& conn,
                                                             const std::string& text,
                                                             const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, nlohmann::json>> plans;
  pqxx::nontransaction tx(conn);
  tx.exec("DEALLOCATE ALL");
  tx.exec("PREPARE plan_probe AS " + text);
  std::string call = "EXECUTE plan_probe(";
  for (std::size_t i = 0; i < args.size(); ++i) {
    call += (i > 0 ? ", " : "") + tx.quote(args[i]);
  }
  call += ")";
  for (const auto* mode : {"force_generic_plan", "force_custom_plan"}) {
    tx.exec(std::string("SET plan_cache_mode = ") + mode);
    const auto row = tx.exec1("EXPLAIN (FORMAT JSON) " + call);
    plans.emplace_back(mode, nlohmann::json::parse(row[0].as<std::string>()).at(0).at("Plan"));
  }
  tx.exec("RESET plan_cache_mode");
  return plans;
}

// The modes whose plan of `text` does not reach `relation` by its rows' ctids.
std::vector<std::string> modes_without_tid_scan(pqxx::connection& conn, const std::string& text,
                                                const std::vector<std::string>& args,
                                                const std::string& relation) {
  std::vector<std::string> missing;
  for (const auto& [mode, plan] : plans_of(conn, text, args)) {
    if (!has_tid_scan(plan, relation)) {
      missing.push_back(mode);
    }
  }
  return missing;
}

// What is wrong with the plans of `text` under generic and custom plans; empty when nothing.
std::vector<std::string> bad_scans(pqxx::connection& conn, const std::string& name,
                                   const std::string& text, const std::vector<std::string>& args) {
  std::vector<std::string> bad;
  for (const auto& [mode, plan] : plans_of(conn, text, args)) {
    std::vector<std::string> found;
    find_bad_scans(plan, found);
    for (const auto& f : found) {
      bad.push_back(name + " (" + mode + "): " + f);
    }
  }
  return bad;
}

void load(pqxx::connection& conn, int from, int to) {
  pqxx::nontransaction tx(conn);
  const auto range = std::to_string(from) + ", " + std::to_string(to);
  tx.exec(
      "INSERT INTO order_info (order_no, user_id, show_id, seat_ids, amount_cents, status, "
      "  expires_at) "
      "SELECT 'o' || g, 'u', 'show' || (g / 500), ARRAY['s' || g], 5000, "
      "  CASE WHEN g % 5 = 0 THEN 1 ELSE 0 END, now() + interval '15 minutes' "
      "FROM generate_series(" +
      range + ") g");
  tx.exec(
      "INSERT INTO payment_order (payment_no, order_no, channel, amount_cents, status) "
      "SELECT 'p' || g, 'o' || g, 'hmac', 5000, CASE WHEN g % 5 = 0 THEN 1 ELSE 0 END "
      "FROM generate_series(" +
      range + ") g");
  tx.exec(
      "INSERT INTO seat_claim (show_id, seat_id, order_no) "
      "SELECT 'show' || (g / 500), 's' || g, 'o' || g FROM generate_series(" +
      range + ") g");
  tx.exec(
      "INSERT INTO payment_callback_log (callback_id, channel, payment_no, status, "
      "  payload_sha256) "
      "SELECT 'c' || g, 'hmac', 'p' || g, 1, 'x' FROM generate_series(" +
      range +
      ") g "
      "WHERE g % 5 = 0");
}

class StatementPlanTest : public ::testing::Test {
 protected:
  StatementPlanTest() : conn_(db_.dsn()) {
    pqxx::nontransaction tx(conn_);
    for (const auto& table : kBigTables) {
      tx.exec("ALTER TABLE " + table + " SET (autovacuum_enabled = off)");
    }
  }

  void expect_hot_statements_by_key(const char* when) {
    SCOPED_TRACE(when);
    for (const auto& [name, args] : hot_statements()) {
      const auto bad = bad_scans(conn_, std::string(name), text_of(name), args);
      EXPECT_TRUE(bad.empty()) << ::testing::PrintToString(bad);
    }
  }

  void expect_old_order_cas_refused(const char* when) {
    // The control: the shape the executor no longer uses must be refused by the same check, or the
    // data is not big enough to tell a good plan from a bad one.
    const auto control =
        bad_scans(conn_, "old order CAS",
                  "UPDATE order_info o SET status = 1, updated_at = now() "
                  "WHERE o.order_no = ANY($1::text[]) AND o.status = 0 RETURNING o.order_no",
                  {array_of("o", 1, kKeys)});
    EXPECT_FALSE(control.empty()) << "the old order CAS got a key-only plan " << when;
  }

  testing::PrivateDatabase db_;
  pqxx::connection conn_;
};

TEST_F(StatementPlanTest, BulkLoadedWithoutAnalyzeEveryHotStatementGoesByKey) {
  load(conn_, 1, kRows);
  expect_hot_statements_by_key("never analysed");
  expect_old_order_cas_refused("never analysed");
}

// The moves fetch the rows their locks returned by ctid, not by a second descent of the key.
TEST_F(StatementPlanTest, TheMovesReachTheirLockedRowsByCtid) {
  load(conn_, 1, kRows);
  namespace sql = persistence::sql;
  for (const auto& [name, args] : hot_statements()) {
    std::vector<std::string> relations;
    if (name == sql::kBatchMoveSucceededAndPaid) {
      relations = {"payment_order", "order_info"};
    } else if (name == sql::kBatchMovePaymentsFailed) {
      relations = {"payment_order"};
    }
    for (const auto& relation : relations) {
      EXPECT_EQ(modes_without_tid_scan(conn_, text_of(name), args, relation),
                std::vector<std::string>{})
          << name << " on " << relation;
    }
  }
}

TEST_F(StatementPlanTest, StaleStatisticsKeepEveryHotStatementOnTheKey) {
  load(conn_, 1, 2000);
  {
    pqxx::nontransaction tx(conn_);
    tx.exec("ANALYZE");
  }
  load(conn_, 2001, kRows);
  expect_hot_statements_by_key("analysed at 2 000 rows, grown to 200 000");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

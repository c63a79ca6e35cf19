// Migration 17 (SPEC §2, §17): the refund table as the SPEC lists it, and the discrepancy refunds
// of an older schema moved into it with their numbers, attempts and outcomes, read back by the
// stores as the API has always shown them; order status 4 is accepted.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "persistence/drivers/pg.hpp"
#include "persistence/stores/migrations.hpp"
#include "persistence/stores/refund_store.hpp"
#include "persistence/stores/sql.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

constexpr int kBeforeRefunds = 16;

// An order, its payment and a discrepancy of it under the schema of version 16; returns the
// discrepancy's id.
std::int64_t seed_discrepancy(pqxx::work& tx, const std::string& name) {
  tx.exec_params(
      "INSERT INTO order_info (order_no, show_id, seat_ids, amount_cents, status) "
      "VALUES ($1, 'show', '{A1}', 5000, 2)",
      "o-" + name);
  tx.exec_params(
      "INSERT INTO payment_order (payment_no, order_no, channel, amount_cents, status) "
      "VALUES ($1, $2, 'hmac', 5000, 3)",
      "p-" + name, "o-" + name);
  return tx
      .exec_params1(
          "INSERT INTO payment_discrepancy (payment_no, order_no, kind) "
          "VALUES ($1, $2, 'paid_after_cancel') RETURNING id",
          "p-" + name, "o-" + name)[0]
      .as<std::int64_t>();
}

// discrepancy_refund as migration 7 made it: `status` by its name.
void seed_old_refund(pqxx::work& tx, std::int64_t id, const std::string& status,
                     const std::string& reason, int attempts, bool finished) {
  tx.exec_params(
      "INSERT INTO discrepancy_refund (discrepancy_id, refund_no, channel, amount_cents, status, "
      "  reason, gateway_refund_no, attempts, started_at, finished_at) "
      "VALUES ($1::bigint, $2, 'hmac', 5000, $3::text, NULLIF($4::text, ''), "
      "  CASE WHEN $3::text = 'succeeded' THEN 'G-' || $1::bigint END, $5, "
      "  now() - interval '1 hour', CASE WHEN $6::boolean THEN now() - interval '59 minutes' END)",
      id, "rfd_old_" + std::to_string(id), status, reason, attempts, finished);
}

TEST(RefundMigration, TheRefundTableMatchesTheSpec) {
  testing::Stores s;
  pqxx::work tx(s.pg());
  std::vector<std::string> columns;
  for (const auto& row :
       tx.exec("SELECT column_name || ' ' || data_type || ' ' || is_nullable "
               "FROM information_schema.columns WHERE table_schema = current_schema() "
               "AND table_name = 'refund' ORDER BY ordinal_position")) {
    columns.push_back(row[0].as<std::string>());
  }
  const std::vector<std::string> expected = {
      "refund_no text NO",
      "payment_no text NO",
      "order_no text NO",
      "channel text NO",
      "seat_ids ARRAY NO",
      "amount_cents bigint NO",
      "reason text YES",
      "source text NO",
      "status smallint NO",
      "gateway_refund_id text YES",
      "failure_reason text YES",
      "requested_at timestamp with time zone NO",
      "accepted_at timestamp with time zone YES",
      "settled_at timestamp with time zone YES",
      "updated_at timestamp with time zone NO",
      // A discrepancy's refund, retried under its number (migration 17's header).
      "discrepancy_id bigint YES",
      "attempts integer NO",
      "attempt_started_at timestamp with time zone NO",
      "attempt_finished_at timestamp with time zone YES",
      "gateway_note text YES",
  };
  EXPECT_EQ(columns, expected);
  EXPECT_TRUE(tx.exec1("SELECT to_regclass('discrepancy_refund') IS NULL")[0].as<bool>());
}

TEST(RefundMigration, TheRefundTableRefusesWhatTheSpecRules) {
  testing::Stores s;
  s.create_order(s.id("o"), s.id("show"), {"A1"}, 5000);
  s.create_payment(s.id("p"), s.id("o"), "hmac", 5000);
  const auto insert = [&](const std::string& refund_no, std::int64_t amount, int status,
                          const std::string& source) {
    pqxx::work tx(s.pg());
    tx.exec_params(
        "INSERT INTO refund (refund_no, payment_no, order_no, channel, amount_cents, status, "
        "source) VALUES ($1, $2, $3, 'hmac', $4, $5, $6)",
        refund_no, s.id("p"), s.id("o"), amount, status, source);
    tx.commit();
  };
  EXPECT_THROW(insert("rfd bad", 100, 0, "api"), pqxx::check_violation);
  EXPECT_THROW(insert(std::string(65, 'r'), 100, 0, "api"), pqxx::check_violation);
  EXPECT_THROW(insert(s.id("r0"), 0, 0, "api"), pqxx::check_violation);
  EXPECT_THROW(insert(s.id("r5"), 100, 5, "api"), pqxx::check_violation);
  EXPECT_THROW(insert(s.id("rx"), 100, 0, "bank"), pqxx::check_violation);
  // A discrepancy's refund names its discrepancy; no other refund does.
  EXPECT_THROW(insert(s.id("rd"), 100, 0, "discrepancy"), pqxx::check_violation);
  EXPECT_NO_THROW(insert(s.id("r4"), 100, 4, "api"));
  EXPECT_NO_THROW(insert(s.id("ok_-9"), 100, 0, "offline"));
  // Order status 4 PARTIALLY_REFUNDED is stored; nothing above it.
  pqxx::work tx(s.pg());
  tx.exec_params("UPDATE order_info SET status = 4 WHERE order_no = $1", s.id("o"));
  EXPECT_THROW(tx.exec_params("UPDATE order_info SET status = 5 WHERE order_no = $1", s.id("o")),
               pqxx::check_violation);
}

TEST(RefundMigration, MovesTheDiscrepancyRefundsWithTheirNumbersAndOutcomes) {
  testing::PrivateDatabase db(kBeforeRefunds);
  pqxx::connection conn(db.dsn());
  std::int64_t succeeded = 0;
  std::int64_t failed = 0;
  std::int64_t pending = 0;
  std::int64_t untried = 0;
  {
    pqxx::work tx(conn);
    succeeded = seed_discrepancy(tx, "s");
    failed = seed_discrepancy(tx, "f");
    pending = seed_discrepancy(tx, "p");
    untried = seed_discrepancy(tx, "u");
    seed_old_refund(tx, succeeded, "succeeded", "refunded", 1, true);
    seed_old_refund(tx, failed, "failed", "gateway refused: NOT_ENOUGH", 2, true);
    seed_old_refund(tx, pending, "pending", "", 3, false);
    tx.exec_params("UPDATE payment_discrepancy SET resolved_at = now() WHERE id = $1", succeeded);
    tx.commit();
  }
  const auto report = persistence::apply_migrations(conn);
  ASSERT_FALSE(report.applied.empty());
  EXPECT_EQ(report.applied.front(), kBeforeRefunds + 1);
  {
    pqxx::work tx(conn);
    const auto rows = tx.exec(
        "SELECT discrepancy_id, refund_no, payment_no, order_no, channel, amount_cents, source, "
        "  status, reason, COALESCE(gateway_refund_id, '-'), COALESCE(failure_reason, '-'), "
        "  COALESCE(gateway_note, '-'), attempts, attempt_finished_at IS NOT NULL, "
        "  settled_at IS NOT NULL, cardinality(seat_ids) "
        "FROM refund ORDER BY discrepancy_id");
    std::vector<std::string> moved;
    for (const auto& row : rows) {
      std::string line;
      for (const auto& field : row) {
        line += (line.empty() ? "" : "|") + field.as<std::string>();
      }
      moved.push_back(line);
    }
    const auto id = [](std::int64_t value) { return std::to_string(value); };
    EXPECT_EQ(moved, (std::vector<std::string>{
                         id(succeeded) + "|rfd_old_" + id(succeeded) +
                             "|p-s|o-s|hmac|5000|discrepancy|2|paid_after_cancel|G-" +
                             id(succeeded) + "|-|refunded|1|t|t|0",
                         id(failed) + "|rfd_old_" + id(failed) +
                             "|p-f|o-f|hmac|5000|discrepancy|0|paid_after_cancel|-|gateway "
                             "refused: NOT_ENOUGH|-|2|t|f|0",
                         id(pending) + "|rfd_old_" + id(pending) +
                             "|p-p|o-p|hmac|5000|discrepancy|0|paid_after_cancel|-|-|-|3|f|f|0",
                     }));
    EXPECT_TRUE(tx.exec1("SELECT to_regclass('discrepancy_refund') IS NULL")[0].as<bool>());
    tx.commit();
  }
  // The stores read them as the API has always shown them.
  persistence::PgSession pg(db.dsn(), 5000, nullptr, &persistence::prepare_statements);
  persistence::RefundStore store(pg);
  const auto shown = [&](std::int64_t discrepancy_id) {
    const auto row = store.discrepancy(discrepancy_id);
    EXPECT_TRUE(row.ok()) << row.detail();
    if (!row.ok() || !row.value().refund) {
      return std::string("none");
    }
    const auto& refund = *row.value().refund;
    return refund.status + "|" + refund.reason.value_or("-") + "|" + refund.refund_no + "|" +
           std::to_string(refund.attempts) + "|" + (refund.finished_at ? "finished" : "out");
  };
  EXPECT_EQ(shown(succeeded),
            "succeeded|refunded|rfd_old_" + std::to_string(succeeded) + "|1|finished");
  EXPECT_EQ(shown(failed),
            "failed|gateway refused: NOT_ENOUGH|rfd_old_" + std::to_string(failed) + "|2|finished");
  EXPECT_EQ(shown(pending), "pending|-|rfd_old_" + std::to_string(pending) + "|3|out");
  EXPECT_EQ(shown(untried), "none");
  // The automatic refund still finds only the discrepancy no refund was tried for.
  const auto due = store.unrefunded_paid_after_cancel(10);
  ASSERT_TRUE(due.ok()) << due.detail();
  EXPECT_EQ(due.value(), std::vector<std::int64_t>{untried});
  EXPECT_TRUE(persistence::apply_migrations(conn).applied.empty());
}

// A discrepancy refund whose payment is gone cannot be moved (refund.payment_no references the
// payment): the migration stops and changes nothing rather than lose the row.
TEST(RefundMigration, RefusesToLoseARefundWhosePaymentIsGone) {
  testing::PrivateDatabase db(kBeforeRefunds);
  pqxx::connection conn(db.dsn());
  {
    pqxx::work tx(conn);
    const auto id = tx.exec1(
                          "INSERT INTO payment_discrepancy (payment_no, kind) "
                          "VALUES ('p-ghost', 'paid_after_cancel') RETURNING id")[0]
                        .as<std::int64_t>();
    seed_old_refund(tx, id, "failed", "gateway refused", 1, true);
    tx.commit();
  }
  try {
    (void)persistence::apply_migrations(conn);
    ADD_FAILURE() << "migration 17 went through with a refund it could not move";
  } catch (const pqxx::sql_error& error) {
    EXPECT_NE(std::string(error.what()).find("not moved into refund"), std::string::npos)
        << error.what();
  }
  pqxx::work tx(conn);
  EXPECT_EQ(tx.exec1("SELECT max(version) FROM schema_migrations")[0].as<int>(), kBeforeRefunds);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM discrepancy_refund")[0].as<int>(), 1);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

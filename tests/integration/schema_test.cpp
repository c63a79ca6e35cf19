// The migrated schema matches SPEC §2 column for column, and migrating again changes nothing.
#include <gtest/gtest.h>

#include <map>

#include "persistence/stores/migrations.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

// column → "data_type|nullable" as information_schema reports them.
using Columns = std::map<std::string, std::string>;

Columns columns_of(pqxx::connection& conn, const std::string& table) {
  pqxx::work tx(conn);
  Columns out;
  for (const auto& row :
       tx.exec_params("SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                      "WHERE table_schema = current_schema() AND table_name = $1",
                      table)) {
    out[row[0].as<std::string>()] = row[1].as<std::string>() + "|" + row[2].as<std::string>();
  }
  return out;
}

TEST(SchemaTest, OrderInfoMatchesTheSpec) {
  testing::Stores s;
  const Columns expected = {
      {"order_no", "text|NO"},
      {"user_id", "text|YES"},
      {"show_id", "text|NO"},
      {"seat_ids", "ARRAY|NO"},
      {"amount_cents", "bigint|NO"},
      {"status", "smallint|NO"},
      {"expires_at", "timestamp with time zone|YES"},
      {"paid_at", "timestamp with time zone|YES"},
      {"created_at", "timestamp with time zone|NO"},
      {"updated_at", "timestamp with time zone|NO"},
  };
  EXPECT_EQ(columns_of(s.pg(), "order_info"), expected);
}

TEST(SchemaTest, PaymentOrderMatchesTheSpec) {
  testing::Stores s;
  const Columns expected = {
      {"payment_no", "text|NO"},
      {"order_no", "text|NO"},
      {"channel", "text|NO"},
      {"amount_cents", "bigint|NO"},
      {"status", "smallint|NO"},
      {"channel_trade_no", "text|YES"},
      {"paid_at", "timestamp with time zone|YES"},
      {"created_at", "timestamp with time zone|NO"},
      {"updated_at", "timestamp with time zone|NO"},
  };
  EXPECT_EQ(columns_of(s.pg(), "payment_order"), expected);
}

TEST(SchemaTest, CallbackLogMatchesTheSpec) {
  testing::Stores s;
  const Columns expected = {
      {"callback_id", "text|NO"},
      {"channel", "text|YES"},
      {"payment_no", "text|YES"},
      {"status", "smallint|YES"},
      {"payload_sha256", "text|NO"},
      {"received_at", "timestamp with time zone|NO"},
      {"duplicate_count", "integer|NO"},
      {"last_duplicate_at", "timestamp with time zone|YES"},
      // Migration 6 (SPEC §12): the first delivery's result and raw request.
      {"result", "text|YES"},
      {"http_status", "smallint|YES"},
      {"raw_body", "bytea|YES"},
      {"raw_headers", "jsonb|YES"},
  };
  EXPECT_EQ(columns_of(s.pg(), "payment_callback_log"), expected);
}

TEST(SchemaTest, DiscrepancyMatchesTheSpec) {
  testing::Stores s;
  const Columns expected = {
      {"id", "bigint|NO"},
      {"payment_no", "text|NO"},
      {"order_no", "text|YES"},
      {"kind", "text|NO"},
      {"detail", "jsonb|NO"},
      {"created_at", "timestamp with time zone|NO"},
      {"resolved_at", "timestamp with time zone|YES"},
  };
  EXPECT_EQ(columns_of(s.pg(), "payment_discrepancy"), expected);
}

// The events live in the WAL: no outbox table, a publication that covers no table (so the slot
// decodes only the event messages), and the event slot on pgoutput.
TEST(SchemaTest, PaymentEventsLiveInTheWalNotInATable) {
  testing::Stores s;
  pqxx::work tx(s.pg());
  EXPECT_EQ(tx.exec1("SELECT to_regclass('payment_event') IS NULL")[0].as<bool>(), true);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM pg_publication WHERE pubname = 'seatflow_events' "
                     "AND NOT puballtables")[0]
                .as<int>(),
            1);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM pg_publication_tables "
                     "WHERE pubname = 'seatflow_events'")[0]
                .as<int>(),
            0);
  EXPECT_EQ(tx.exec1("SELECT plugin FROM pg_replication_slots "
                     "WHERE slot_name = 'seatflow_events' AND database = current_database()")[0]
                .as<std::string>(),
            "pgoutput");
}

// Migration 8 drops the outbox table, so it refuses while the table still holds events that the
// previous engine's relay has not published, and goes through once they are.
TEST(SchemaTest, MigrationEightRefusesWhileTheOutboxTableHoldsUnpublishedEvents) {
  testing::PrivateDatabase db(7);
  pqxx::connection conn(db.dsn());
  {
    pqxx::work tx(conn);
    tx.exec(
        "INSERT INTO payment_event (event_id, type, published_at) VALUES "
        "('payment.failed:a', 'payment.failed', now()), "
        "('payment.failed:b', 'payment.failed', NULL)");
    tx.commit();
  }
  try {
    (void)persistence::apply_migrations(conn);
    ADD_FAILURE() << "migration 8 went through with an unpublished event";
  } catch (const pqxx::sql_error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("migration 8 refused: payment_event holds 1 "
                        "unpublished events"),
              std::string::npos)
        << error.what();
  }
  {
    pqxx::work tx(conn);
    EXPECT_EQ(tx.exec1("SELECT count(*) FROM payment_event")[0].as<int>(), 2);
    EXPECT_EQ(tx.exec1("SELECT max(version) FROM schema_migrations")[0].as<int>(), 7);
    tx.exec("UPDATE payment_event SET published_at = now()");
    tx.commit();
  }
  const auto report = persistence::apply_migrations(conn);
  ASSERT_FALSE(report.applied.empty());
  EXPECT_EQ(report.applied.front(), 8);
  pqxx::work tx(conn);
  EXPECT_EQ(tx.exec1("SELECT to_regclass('payment_event') IS NULL")[0].as<bool>(), true);
}

TEST(SchemaTest, KeysAndConstraintsHold) {
  testing::Stores s;
  const auto show = s.id("show");
  s.create_order(s.id("o1"), show, {"A1"}, 100);
  s.create_order(s.id("o2"), show, {"A2"}, 100);
  s.create_payment(s.id("p1"), s.id("o1"), "hmac", 100);
  // UNIQUE(order_no): one payment per order.
  EXPECT_THROW(s.create_payment(s.id("p2"), s.id("o1"), "hmac", 100), pqxx::unique_violation);
  // The order must exist.
  EXPECT_THROW(s.create_payment(s.id("p3"), s.id("missing"), "hmac", 100),
               pqxx::foreign_key_violation);
  // Unknown channel and status out of range are refused.
  EXPECT_THROW(s.create_payment(s.id("p4"), s.id("o2"), "paypal", 100), pqxx::check_violation);
  EXPECT_THROW(s.create_payment(s.id("p5"), s.id("o2"), "hmac", 100, 5), pqxx::check_violation);
  // At most one open discrepancy per (payment_no, kind); a resolved one does not count.
  pqxx::work tx(s.pg());
  const auto insert =
      "INSERT INTO payment_discrepancy (payment_no, kind) VALUES ($1, 'paid_after_cancel')";
  tx.exec_params(insert, s.id("p1"));
  tx.exec_params("UPDATE payment_discrepancy SET resolved_at = now() WHERE payment_no = $1",
                 s.id("p1"));
  tx.exec_params(insert, s.id("p1"));
  EXPECT_THROW(tx.exec_params(insert, s.id("p1")), pqxx::unique_violation);
}

// 2 000 pending orders `<prefix>-o<i>` loaded in one statement, as a bulk load fills pages, and
// with `payments` their pending payments `<prefix>-p<i>`.
void bulk_load_pending(testing::Stores& s, const std::string& prefix, bool payments) {
  pqxx::work load(s.pg());
  load.exec_params(
      "INSERT INTO order_info (order_no, show_id, seat_ids, amount_cents) "
      "SELECT $1 || '-o' || i, $1, ARRAY['A' || i], 100 FROM generate_series(1, 2000) i",
      prefix);
  if (payments) {
    load.exec_params(
        "INSERT INTO payment_order (payment_no, order_no, channel, amount_cents) "
        "SELECT $1 || '-p' || i, $1 || '-o' || i, 'hmac', 100 FROM generate_series(1, 2000) i",
        prefix);
  }
  load.commit();
}

TEST(SchemaTest, PaymentsMovedAfterABulkLoadAreUpdatedInPlace) {
  // Migration 9's fillfactor: pages filled by a bulk load keep room for the next version of their
  // rows, so a move is a HOT update (no new index entries). With full pages almost none is.
  testing::Stores s;
  const auto prefix = s.id("ff");
  bulk_load_pending(s, prefix, true);
  pqxx::work move(s.pg());
  const auto moved = move.exec_params(
      "UPDATE payment_order SET status = 1, paid_at = now(), updated_at = now() "
      "WHERE payment_no = ANY(SELECT $1 || '-p' || i FROM generate_series(10, 2000, 10) i)",
      prefix);
  ASSERT_EQ(moved.affected_rows(), 200U);
  const auto counts = move.exec1(
      "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables "
      "WHERE relid = 'payment_order'::regclass");
  EXPECT_EQ(counts[0].as<long>(), 200);
  EXPECT_GE(counts[1].as<long>(), 190) << "HOT updates of 200";
}

TEST(SchemaTest, OrdersMovedAfterABulkLoadKeepTheirNewVersionOnTheirPage) {
  // Migration 10's fillfactor: an order's move cannot be HOT (its status is in the pending-expiry
  // index's predicate), but with room on the page its new version stays on the old page. With full
  // pages almost none does.
  testing::Stores s;
  const auto prefix = s.id("off");
  bulk_load_pending(s, prefix, false);
  pqxx::work move(s.pg());
  const auto pages = move.exec_params(
      "WITH before AS ("
      "  SELECT order_no, (ctid::text::point)[0] AS page FROM order_info "
      "  WHERE order_no = ANY(SELECT $1 || '-o' || i FROM generate_series(10, 2000, 10) i)), "
      "moved AS ("
      "  UPDATE order_info o SET status = 1, updated_at = now() FROM before b "
      "  WHERE o.order_no = b.order_no RETURNING o.order_no, (o.ctid::text::point)[0] AS page) "
      "SELECT count(*), count(*) FILTER (WHERE m.page = b.page) "
      "FROM moved m JOIN before b ON b.order_no = m.order_no",
      prefix);
  ASSERT_EQ(pages[0][0].as<long>(), 200);
  EXPECT_GE(pages[0][1].as<long>(), 190) << "moves that stayed on their page, of 200";
}

TEST(SchemaTest, MigratingAgainAppliesNothing) {
  testing::Stores s;
  const auto first = persistence::apply_migrations(s.pg());
  const auto second = persistence::apply_migrations(s.pg());
  EXPECT_TRUE(second.applied.empty());
  EXPECT_EQ(second.to_version, persistence::migrations().back().version);
  EXPECT_EQ(first.to_version, second.to_version);
  pqxx::work tx(s.pg());
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM schema_migrations")[0].as<std::size_t>(),
            persistence::migrations().size());
}

TEST(SchemaTest, MigrationVersionsStrictlyIncrease) {
  const auto& all = persistence::migrations();
  ASSERT_FALSE(all.empty());
  EXPECT_GE(all.front().version, 1);
  for (std::size_t i = 1; i < all.size(); ++i) {
    EXPECT_LT(all[i - 1].version, all[i].version) << "migration " << all[i].name;
  }
}

TEST(SchemaTest, PaymentsAcceptTheStripeAndStandardChannels) {
  testing::Stores s;
  for (const std::string channel : {"hmac", "alipay", "wechat", "stripe", "standard"}) {
    s.create_order(s.id("o-" + channel), s.id("show"), {channel}, 100);
    EXPECT_NO_THROW(s.create_payment(s.id("p-" + channel), s.id("o-" + channel), channel, 100))
        << channel;
  }
  s.create_order(s.id("o-paypal"), s.id("show"), {"paypal"}, 100);
  EXPECT_THROW(s.create_payment(s.id("p-paypal"), s.id("o-paypal"), "paypal", 100),
               pqxx::check_violation);
}

// Versions need only increase: a migration whose version is below one already applied (a branch
// merged later) is still applied, exactly once. Simulated on a private database by forgetting
// version 4 and undoing it, with a higher version recorded.
TEST(SchemaTest, AMissingVersionBelowTheHighestAppliedIsApplied) {
  const testing::PrivateDatabase db;
  pqxx::connection conn(db.dsn());
  {
    pqxx::work tx(conn);
    tx.exec("DELETE FROM schema_migrations WHERE version = 4");
    tx.exec("ALTER TABLE payment_order DROP CONSTRAINT payment_order_channel_check");
    tx.exec(
        "ALTER TABLE payment_order ADD CONSTRAINT payment_order_channel_check "
        "CHECK (channel IN ('hmac', 'alipay', 'wechat'))");
    tx.exec("INSERT INTO schema_migrations (version, name) VALUES (1000, 'from the future')");
    tx.commit();
  }
  const auto report = persistence::apply_migrations(conn);
  EXPECT_EQ(report.applied, std::vector<int>{4});
  EXPECT_EQ(report.to_version, 1000);
  EXPECT_TRUE(persistence::apply_migrations(conn).applied.empty());
  pqxx::work tx(conn);
  tx.exec(
      "INSERT INTO order_info (order_no, show_id, seat_ids, amount_cents) "
      "VALUES ('o-gap', 's', ARRAY['A1'], 1)");
  EXPECT_NO_THROW(
      tx.exec("INSERT INTO payment_order (payment_no, order_no, channel, amount_cents) "
              "VALUES ('p-gap', 'o-gap', 'standard', 1)"));
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

// The active-query schedule in real PostgreSQL (SPEC §10): due rows are taken under a lease (a
// second engine taking at the same time gets none of them; after the lease they are due again), an
// attempt moves the schedule on or finishes it, and the sweeper's postponement is taken once.
#include <gtest/gtest.h>

#include <thread>

#include "persistence/stores/query_store.hpp"
#include "persistence/stores/sql.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

class QueryStoreTest : public ::testing::Test {
 protected:
  QueryStoreTest()
      : pg_(db_.dsn(), 5000, nullptr, &persistence::prepare_statements),
        other_pg_(db_.dsn(), 5000, nullptr, &persistence::prepare_statements),
        s_(db_.dsn()),
        store_(pg_),
        other_(other_pg_) {}

  // A pending payment whose query is due `due_in_ms` from now (negative: overdue).
  std::string pending(const std::string& name, int due_in_ms) {
    const auto payment = s_.id(name);
    s_.create_pending(payment, s_.id(name + "-o"), s_.id("show"), {name + "-1"});
    pqxx::work tx(s_.pg());
    tx.exec_params(
        "INSERT INTO payment_query (payment_no, next_at) "
        "VALUES ($1, now() + $2 * interval '1 millisecond')",
        payment, due_in_ms);
    tx.commit();
    return payment;
  }

  std::pair<int, std::string> row(const std::string& payment) {
    pqxx::work tx(s_.pg());
    const auto r = tx.exec_params1(
        "SELECT attempts, CASE WHEN next_at = 'infinity' THEN 'done' "
        "  WHEN next_at > now() + interval '50 seconds' THEN 'later' ELSE 'soon' END "
        "FROM payment_query WHERE payment_no = $1",
        payment);
    return {r[0].as<int>(), r[1].as<std::string>()};
  }

  // The payment_query table is the subject: a database of the test's own.
  testing::PrivateDatabase db_;
  persistence::PgSession pg_;
  persistence::PgSession other_pg_;
  testing::Stores s_;
  persistence::QueryStore store_;
  persistence::QueryStore other_;
};

TEST_F(QueryStoreTest, DueRowsAreTakenUnderALeaseAndOnlyOnce) {
  const auto a = pending("a", -1000);
  const auto b = pending("b", -500);
  (void)pending("later", 60'000);
  const auto claimed = store_.claim_due(10, 300);
  ASSERT_TRUE(claimed.ok());
  const auto& first = claimed.value();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].payment_no, a);  // oldest first
  EXPECT_EQ(first[1].payment_no, b);
  EXPECT_TRUE(first[0].pending);
  EXPECT_EQ(first[0].channel, domain::Channel::hmac);
  EXPECT_EQ(first[0].amount_cents, 5000);
  // Another engine looking now finds nothing: the lease moved both rows ahead.
  EXPECT_TRUE(other_.claim_due(10, 300).value().empty());
  // A crash mid-query: after the lease the rows are due again.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(other_.claim_due(10, 300).value().size(), 2u);
}

TEST_F(QueryStoreTest, AnAttemptMovesTheScheduleOnOrFinishesIt) {
  const auto a = pending("a", -1000);
  ASSERT_EQ(store_.claim_due(10, 60'000).value().size(), 1u);
  ASSERT_TRUE(store_.record(a, "pending", 120'000).ok());
  EXPECT_EQ(row(a), (std::pair<int, std::string>{1, "later"}));
  ASSERT_TRUE(store_.record(a, "unreachable", std::nullopt).ok());
  EXPECT_EQ(row(a), (std::pair<int, std::string>{2, "done"}));
  EXPECT_TRUE(store_.claim_due(10, 60'000).value().empty());
  pqxx::work tx(s_.pg());
  EXPECT_EQ(tx.exec_params1("SELECT last_result FROM payment_query WHERE payment_no = $1", a)[0]
                .as<std::string>(),
            "unreachable");
}

TEST_F(QueryStoreTest, APaymentNoLongerPendingIsReportedSoItsScheduleEnds) {
  const auto a = pending("a", -1000);
  {
    pqxx::work tx(s_.pg());
    tx.exec_params("UPDATE payment_order SET status = 1, paid_at = now() WHERE payment_no = $1", a);
    tx.commit();
  }
  const auto due = store_.claim_due(10, 60'000);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due.value().size(), 1u);
  EXPECT_FALSE(due.value()[0].pending);
  const auto loaded = store_.load(a);
  ASSERT_TRUE(loaded.ok());
  EXPECT_FALSE(loaded.value().pending);
  EXPECT_EQ(store_.load(s_.id("nobody")).error(), persistence::errc::not_found);
}

TEST_F(QueryStoreTest, TheSweepersPostponementIsTakenOnce) {
  const auto a = pending("a", 60'000);
  EXPECT_TRUE(store_.postpone_expiry(a, 90'000).value());
  {
    pqxx::work tx(s_.pg());
    EXPECT_TRUE(tx.exec_params1("SELECT expires_at > now() + interval '80 seconds' FROM order_info "
                                "WHERE order_no = $1",
                                s_.id("a-o"))[0]
                    .as<bool>());
  }
  EXPECT_FALSE(store_.postpone_expiry(a, 90'000).value());
}

TEST_F(QueryStoreTest, ALostConnectionIsAFailureNotAnExceptionAndTheNextCallReconnects) {
  const auto a = pending("a", -1000);
  ASSERT_TRUE(store_.load(a).ok());
  const int backend = pg_.connection().backendpid();
  {
    pqxx::work tx(s_.pg());
    EXPECT_TRUE(tx.exec_params1("SELECT pg_terminate_backend($1)", backend)[0].as<bool>());
    tx.commit();
  }
  domain::Result<persistence::DueQuery> lost =
      persistence::refused(persistence::errc::not_found, "");
  EXPECT_NO_THROW(lost = store_.load(a));
  EXPECT_EQ(lost.error(), persistence::errc::pg_unavailable);
  EXPECT_EQ(lost.detail(), "storage unavailable");
  const auto again = store_.load(a);
  ASSERT_TRUE(again.ok()) << again.detail();
  EXPECT_EQ(again.value().payment_no, a);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

// The bill run's PostgreSQL session (SPEC §13): its statements are bounded, and the server checks
// that its client is still there, so a stopped or killed engine leaves no statement running; the
// lease is short.
#include <gtest/gtest.h>

#include <string>

#include "actors/bill_actor.hpp"
#include "actors/bill_lease.hpp"
#include "persistence/drivers/pg_limits.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

TEST(BillSession, CarriesAStatementTimeoutAndAConnectionCheck) {
  const auto store = actors::bill_store_settings({}, actors::BillSettings{});
  EXPECT_EQ(store.pg.statement_ms_max, actors::kBillStatementMsMax);
  EXPECT_EQ(store.pg.connection_check_ms, actors::kBillConnectionCheckMs);
  const auto sql = persistence::session_setup_sql(store.pg);
  EXPECT_NE(sql.find("SET statement_timeout = " + std::to_string(actors::kBillStatementMsMax)),
            std::string::npos)
      << sql;
  EXPECT_NE(sql.find("SET client_connection_check_interval = 1000"), std::string::npos) << sql;
  // Every other session leaves the server's default.
  EXPECT_EQ(persistence::session_setup_sql(persistence::PgLimits{})
                .find("client_connection_check_interval"),
            std::string::npos);
}

TEST(BillSession, TheLeaseIsShortAndRenewedWellWithinIt) {
  EXPECT_LE(actors::kBillRunLeaseMs, 60'000u);
  EXPECT_EQ(actors::BillSettings{}.lease_ms, actors::kBillRunLeaseMs);
  EXPECT_LT(actors::kBillLeaseCallMsMax, actors::kBillRunLeaseMs / 3);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

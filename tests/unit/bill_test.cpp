// Bill reconciliation's pure parts (SPEC §13): the hmac bill dialect's answers (columns by name,
// signature under any secret, every failure), the bill date and time helpers, the settings.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "channels/hmac/hmac_bill.hpp"
#include "persistence/stores/bill_store.hpp"
#include "support/bill_rows.hpp"
#include "support/config_settings.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using channels::BillStep;

using Rows = testing::KeptRows;

net::Response answer(int status, std::string body, const std::string& secret) {
  net::Response response;
  response.status = status;
  if (!secret.empty()) {
    response.headers.emplace_back("x-bill-signature", channels::hmac_bill_signature(secret, body));
  }
  response.body = std::move(body);
  return response;
}

struct Read {
  domain::Result<BillStep> step;
  std::vector<channels::BillRow> rows;
};

Read read(const net::Response& response, channels::BillLimits limits = {}) {
  const channels::HmacBill bill({{"new-secret", "old-secret"}, 300'000},
                                net::Url{false, "gw", 80, "/base/"});
  channels::BillCursor cursor;
  Rows sink;
  auto step = bill.step({"2026-11-20", 0, 0}, limits, cursor, response, sink, 0);
  return {std::move(step), std::move(sink.rows)};
}

TEST(HmacBill, TheRequestNamesTheDay) {
  const channels::HmacBill bill({{"s"}, 0}, net::Url{false, "gw", 80, "/base/"});
  EXPECT_EQ(bill.bill_request({"2026-11-20", 0, 0}, 0).url.target,
            "/base/api/gateway/bills/2026-11-20");
}

TEST(HmacBill, ColumnsAreFoundByNameAndAnySecretVerifies) {
  const std::string body =
      "completedAt,amountCents,extra,type,paymentNo,tradeNo\r\n"
      "2026-11-20T02:03:04Z,5000,x,payment,P1,T1\r\n"
      "2026-11-20T02:03:05.250Z,100,y,refund,P1,T1\r\n\r\n";
  const auto got = read(answer(200, body, "old-secret"));
  ASSERT_TRUE(got.step.ok()) << got.step.detail();
  EXPECT_EQ(got.step.value().kind, BillStep::Kind::done);
  EXPECT_EQ(got.step.value().summary.rows, 2u);
  EXPECT_EQ(got.step.value().summary.sha256.size(), 64u);
  ASSERT_EQ(got.rows.size(), 2u);
  EXPECT_EQ(got.rows[0].trade_no, "T1");
  EXPECT_EQ(got.rows[0].payment_no, "P1");
  EXPECT_EQ(got.rows[0].amount_cents, 5000);
  EXPECT_EQ(got.rows[0].completed_at_ms, 1795140184000);
  EXPECT_EQ(got.rows[1].kind, channels::BillRowKind::refund);
  EXPECT_EQ(got.rows[1].completed_at_ms, 1795140185250);
}

TEST(HmacBill, EveryFailureIsARejectedAnswer) {
  const std::string header = "tradeNo,paymentNo,type,amountCents,completedAt\n";
  const auto good = header + "T1,P1,payment,5000,2026-11-20T02:03:04Z\n";
  const std::vector<std::pair<net::Response, std::string>> cases = {
      {answer(200, good, "another-secret"), "signature"},
      {answer(200, good, ""), "signature"},
      {answer(200, "tradeNo,paymentNo,type,amountCents\nT1,P1,payment,1\n", "new-secret"),
       "completedAt"},
      {answer(200, header + "T1,P1,payment,12.50,2026-11-20T02:03:04Z\n", "new-secret"), "line 2"},
      {answer(200, header + "T1,P1,payment,0,2026-11-20T02:03:04Z\n", "new-secret"), "line 2"},
      {answer(200, header + "T1,P1,gift,5,2026-11-20T02:03:04Z\n", "new-secret"), "line 2"},
      {answer(200, header + "T1,P1,payment,5,2026-11-20 02:03:04\n", "new-secret"), "line 2"},
      {answer(200, header + "T1,P1,payment,5\n", "new-secret"), "line 2"},
      {answer(200, header + ",P1,payment,5,2026-11-20T02:03:04Z\n", "new-secret"), "line 2"},
      {answer(500, "oops", ""), "HTTP status 500"},
  };
  for (const auto& [response, why] : cases) {
    const auto got = read(response);
    ASSERT_FALSE(got.step.ok()) << response.body;
    EXPECT_EQ(got.step.error(), channels::errc::rejected_answer);
    EXPECT_NE(got.step.detail().find(why), std::string::npos) << got.step.detail();
  }
}

TEST(HmacBill, LimitsAreEnforcedWhileReading) {
  const std::string body =
      "tradeNo,paymentNo,type,amountCents,completedAt\n"
      "T1,P1,payment,5,2026-11-20T02:03:04Z\nT2,P2,payment,5,2026-11-20T02:03:04Z\n";
  channels::BillLimits rows;
  rows.rows_max = 1;
  const auto over_rows = read(answer(200, body, "new-secret"), rows);
  ASSERT_FALSE(over_rows.step.ok());
  EXPECT_NE(over_rows.step.detail().find("SEATFLOW_BILL_ROWS_MAX"), std::string::npos);
  channels::BillLimits bytes;
  bytes.bytes_max = body.size() - 1;
  const auto over_bytes = read(answer(200, body, "new-secret"), bytes);
  ASSERT_FALSE(over_bytes.step.ok());
  EXPECT_NE(over_bytes.step.detail().find("SEATFLOW_BILL_BYTES_MAX"), std::string::npos);
  EXPECT_TRUE(over_bytes.rows.empty());
}

TEST(HmacBill, NoBillAndNotReady) {
  const auto none = read(answer(404, "", ""));
  ASSERT_TRUE(none.step.ok());
  EXPECT_EQ(none.step.value().kind, BillStep::Kind::no_bill);
  for (const int status : {409, 425}) {
    const auto later = read(answer(status, "", ""));
    ASSERT_TRUE(later.step.ok());
    EXPECT_EQ(later.step.value().kind, BillStep::Kind::not_ready);
  }
}

TEST(HmacBill, TheGatewaysCsvReadsBack) {
  const std::vector<channels::HmacBillEntry> entries = {
      {"T1", "P1", channels::BillRowKind::payment, 5000, 1795140184000},
      {"T1", "P1", channels::BillRowKind::refund, 5000, 1795140185250}};
  const auto got = read(answer(200, channels::hmac_bill_csv(entries), "new-secret"));
  ASSERT_TRUE(got.step.ok()) << got.step.detail();
  ASSERT_EQ(got.rows.size(), 2u);
  EXPECT_EQ(got.rows[1].completed_at_ms, 1795140185250);
  EXPECT_EQ(channels::format_utc_ms(1795140184000), "2026-11-20T02:03:04Z");
  EXPECT_EQ(channels::format_utc_ms(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(channels::parse_utc_ms("2024-02-29T23:59:59.999Z"), 1709251199999);
  EXPECT_FALSE(channels::parse_utc_ms("2024-02-29T23:59:59+08:00"));
}

TEST(BillDate, OnlyCalendarDays) {
  EXPECT_TRUE(persistence::valid_bill_date("2026-11-20"));
  EXPECT_TRUE(persistence::valid_bill_date("2024-02-29"));
  EXPECT_TRUE(persistence::valid_bill_date("2000-02-29"));
  for (const auto* bad : {"2026-02-29", "1900-02-29", "2026-13-01", "2026-04-31", "2026-11-2",
                          "2026/11/20", "20261120", "", "2026-11-20 ", "1969-12-31"}) {
    EXPECT_FALSE(persistence::valid_bill_date(bad)) << bad;
  }
}

TEST(BillSettings, DefaultsAndBounds) {
  const auto defaults = testing::load_settings({});
  ASSERT_TRUE(defaults.config) << defaults.error;
  const auto& bill = defaults.config->engine.bill;
  EXPECT_FALSE(bill.schedule);
  EXPECT_EQ(bill.schedule_at, "10:00");
  EXPECT_EQ(bill.timezone, "Asia/Shanghai");
  EXPECT_EQ(bill.limits.bytes_max, 256u * 1024u * 1024u);
  EXPECT_EQ(bill.limits.rows_max, 5'000'000u);
  EXPECT_EQ(bill.edge_ms, 900'000u);
  EXPECT_EQ(bill.work_share_pct, 50u);
  const auto set = testing::load_settings({{"SEATFLOW_BILL_RECON", "on"},
                                           {"SEATFLOW_BILL_RECON_AT", "03:30"},
                                           {"SEATFLOW_BILL_TIMEZONE", "Etc/GMT-8"},
                                           {"SEATFLOW_BILL_ROWS_MAX", "10"},
                                           {"SEATFLOW_BILL_WORK_SHARE_PCT", "100"}});
  ASSERT_TRUE(set.config) << set.error;
  EXPECT_TRUE(set.config->engine.bill.schedule);
  EXPECT_EQ(set.config->engine.bill.schedule_at, "03:30");
  EXPECT_EQ(set.config->engine.bill.limits.rows_max, 10u);
  EXPECT_EQ(set.config->engine.bill.work_share_pct, 100u);
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"SEATFLOW_BILL_RECON_AT", "24:00"},
           {"SEATFLOW_BILL_RECON_AT", "9:00"},
           {"SEATFLOW_BILL_TIMEZONE", "Asia/Shanghai; DROP"},
           {"SEATFLOW_BILL_BYTES_MAX", "2147483648"},
           {"SEATFLOW_BILL_ROWS_MAX", "0"},
           {"SEATFLOW_BILL_FETCH_TIMEOUT_MS", "10"},
           {"SEATFLOW_BILL_WORK_SHARE_PCT", "0"},
           {"SEATFLOW_BILL_WORK_SHARE_PCT", "101"},
           {"SEATFLOW_BILL_RECON", "sometimes"}}) {
    const auto refused = testing::load_settings({{name, value}});
    ASSERT_FALSE(refused.config) << name << "=" << value;
    EXPECT_EQ(refused.error.rfind(name, 0), 0u) << refused.error;
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

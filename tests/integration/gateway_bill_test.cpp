// The wechat and alipay bill dialects end to end: their real requests through net::HttpClient over
// loopback HTTPS (the test CA) to the fake bill servers (tests/support/fake_bill_gateways.hpp),
// which check the merchant's signature and serve real-format bills: a whole bill of each, a wrong
// SHA-1, a total that does not agree, a corrupt download, not ready and no bill.
#include <gtest/gtest.h>

#include "channels/alipay/alipay_bill.hpp"
#include "channels/wechat/wechat_bill.hpp"
#include "domain/clock.hpp"
#include "net/http_client.hpp"
#include "support/bill_files.hpp"
#include "support/fake_bill_gateways.hpp"
#include "support/rejections.hpp"
#include "support/test_http_server.hpp"
#include "support/test_keys.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using channels::BillStep;
using testing::FakeBillMode;
using testing::FakeBillRow;
using testing::rejection_detail;
using testing::test_key;

const std::string kAppId = "2021000000000001";
const std::string kMchid = "1900000001";
const std::string kMerchantSerial = "3775B6A45ACD588826D15E583A95F5DD";
const std::string kPlatformSerial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";
constexpr std::int64_t kHourMs = 3600 * 1000;
// A steps' bound: the two-step exchanges end in two.
constexpr int kStepsMax = 4;

const std::vector<FakeBillRow> kRows = {
    {false, "4200000001202611300000000001", "P-1", "", 5000, 30000, "2026-11-30 10:00:00"},
    {true, "4200000001202611300000000001", "P-1", "R-1", 5000, -30000, "2026-11-30 12:00:00"},
};

net::Url url_of(const std::string& text) {
  const auto url = net::parse_url(text);
  EXPECT_TRUE(url.ok()) << text;
  return url.ok() ? url.value() : net::Url{};
}

const net::HttpClient& client() {
  static const net::HttpClient instance(net::ClientLimits{2000, 5000, 1 << 20},
                                        testing::make_test_ca().ca_pem_path);
  return instance;
}

// A day that ended `ended_ago_ms` before now.
channels::BillDay day_ended(std::int64_t ended_ago_ms) {
  const auto end = domain::unix_time_ms() - ended_ago_ms;
  return channels::BillDay{"2026-11-30", end - 24 * kHourMs, end};
}

// One run as the bill runner makes it: the first request, then each `next`, every answer stepped.
channels::Result<BillStep> run(const channels::BillDialect& dialect, const channels::BillDay& day,
                               testing::RecordingBillSink& sink) {
  channels::BillCursor cursor;
  auto request = dialect.bill_request(day, domain::unix_time_ms());
  for (int i = 0; i < kStepsMax; ++i) {
    const auto response = client().send(request);
    if (!response.ok()) {
      return channels::rejected_answer("no answer: " + response.detail());
    }
    auto step = dialect.step(day, {}, cursor, response.value(), sink, domain::unix_time_ms());
    if (!step.ok() || step.value().kind != BillStep::Kind::next) {
      return step;
    }
    request = *step.value().next;
  }
  return channels::rejected_answer("too many steps");
}

channels::WechatBill wechat_dialect(const testing::FakeWechatBillServer& fake) {
  return channels::WechatBill(
      channels::WechatQueryConfig{kMchid,
                                  url_of(fake.url()),
                                  test_key("wechat-query-merchant").private_key,
                                  kMerchantSerial,
                                  {{kPlatformSerial, test_key("wechat").public_key}}});
}

channels::AlipayBill alipay_dialect(const testing::FakeAlipayBillServer& fake) {
  return channels::AlipayBill(channels::AlipayQueryConfig{
      kAppId, url_of(fake.url()), test_key("alipay-query-merchant").private_key,
      test_key("alipay").public_key});
}

struct WechatFixture {
  testing::FakeWechatBillServer fake{kMchid, kMerchantSerial, test_key("wechat-query-merchant"),
                                     kPlatformSerial, test_key("wechat")};
};

TEST(GatewayBill, WechatServesAWholeBillInTwoSignedSteps) {
  WechatFixture f;
  f.fake.set_bill("2026-11-30", kRows);
  testing::RecordingBillSink sink;
  const auto step = run(wechat_dialect(f.fake), day_ended(kHourMs), sink);
  ASSERT_TRUE(step.ok()) << step.detail();
  EXPECT_EQ(step.value().kind, BillStep::Kind::done);
  EXPECT_EQ(step.value().summary.rows, 2U);
  EXPECT_EQ(step.value().summary.sha256.size(), 64U);
  ASSERT_EQ(sink.rows.size(), 2U);
  EXPECT_EQ(sink.rows[1].refund_no, "R-1");
  EXPECT_EQ(f.fake.bill_requests(), 1);
  EXPECT_EQ(f.fake.downloads(), 1);
  EXPECT_EQ(f.fake.refused_signatures(), 0);
}

TEST(GatewayBill, WechatFailuresAreRejectionsAndNotReadyAndNoBillAreSteps) {
  WechatFixture f;
  f.fake.set_bill("2026-11-30", kRows);
  const auto dialect = wechat_dialect(f.fake);
  const std::vector<std::pair<FakeBillMode, std::string>> failures = {
      {FakeBillMode::wrong_hash, "SHA-1"},
      {FakeBillMode::bad_total, "总交易单数"},
      {FakeBillMode::corrupt, "truncated"}};
  for (const auto& [mode, expected] : failures) {
    f.fake.set_mode(mode);
    testing::RecordingBillSink sink;
    const auto step = run(dialect, day_ended(kHourMs), sink);
    ASSERT_FALSE(step.ok()) << expected;
    EXPECT_NE(rejection_detail(step).find(expected), std::string::npos) << step.detail();
  }
  f.fake.set_mode(FakeBillMode::not_ready);
  testing::RecordingBillSink sink;
  const auto creating = run(dialect, day_ended(kHourMs), sink);
  ASSERT_TRUE(creating.ok()) << creating.detail();
  EXPECT_EQ(creating.value().kind, BillStep::Kind::not_ready);
  f.fake.set_mode(FakeBillMode::honest);
  auto other_day = day_ended(kHourMs);
  other_day.date = "2026-11-29";
  const auto none = run(dialect, other_day, sink);
  ASSERT_TRUE(none.ok()) << none.detail();
  EXPECT_EQ(none.value().kind, BillStep::Kind::no_bill);
  EXPECT_EQ(f.fake.refused_signatures(), 0);
}

TEST(GatewayBill, AlipayServesTheGbkZipOfADay) {
  testing::FakeAlipayBillServer fake(kAppId, test_key("alipay-query-merchant"), test_key("alipay"));
  fake.set_bill("2026-11-30", kRows);
  testing::RecordingBillSink sink;
  const auto step = run(alipay_dialect(fake), day_ended(kHourMs), sink);
  ASSERT_TRUE(step.ok()) << step.detail();
  EXPECT_EQ(step.value().kind, BillStep::Kind::done);
  ASSERT_EQ(sink.rows.size(), 2U);
  EXPECT_EQ(sink.rows[0].payment_no, "P-1");
  EXPECT_EQ(sink.rows[1].kind, channels::BillRowKind::refund);
  EXPECT_EQ(fake.downloads(), 1);
  EXPECT_EQ(fake.refused_signatures(), 0);
}

TEST(GatewayBill, AlipayFailuresNotReadyAndNoBill) {
  testing::FakeAlipayBillServer fake(kAppId, test_key("alipay-query-merchant"), test_key("alipay"));
  fake.set_bill("2026-11-30", kRows);
  const auto dialect = alipay_dialect(fake);
  for (const auto& [mode, expected] : std::vector<std::pair<FakeBillMode, std::string>>{
           {FakeBillMode::bad_total, "count"}, {FakeBillMode::corrupt, "checksum"}}) {
    fake.set_mode(mode);
    testing::RecordingBillSink sink;
    const auto step = run(dialect, day_ended(kHourMs), sink);
    ASSERT_FALSE(step.ok()) << expected;
    EXPECT_NE(rejection_detail(step).find(expected), std::string::npos) << step.detail();
  }
  fake.set_mode(FakeBillMode::not_ready);
  testing::RecordingBillSink sink;
  const auto early = run(dialect, day_ended(kHourMs), sink);
  ASSERT_TRUE(early.ok()) << early.detail();
  EXPECT_EQ(early.value().kind, BillStep::Kind::not_ready);
  const auto late = run(dialect, day_ended(13 * kHourMs), sink);
  ASSERT_TRUE(late.ok()) << late.detail();
  EXPECT_EQ(late.value().kind, BillStep::Kind::no_bill);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

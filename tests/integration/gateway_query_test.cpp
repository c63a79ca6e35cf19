// The alipay and wechat query dialects end to end: their real requests through net::HttpClient
// over loopback HTTPS (the test CA) to fake gateways that verify the merchant's signature and
// answer signed — every mapping, every bad answer, and a gateway that stalls past the deadline.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "channels/alipay/alipay_query.hpp"
#include "channels/wechat/wechat_query.hpp"
#include "domain/clock.hpp"
#include "net/http_client.hpp"
#include "support/fake_gateways.hpp"
#include "support/test_http_server.hpp"
#include "support/test_keys.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using channels::QueryAnswer;
using channels::QueryState;
using channels::QueryTarget;
using testing::FakeAnswer;
using testing::FakeTrade;
using testing::kFakeStallMs;
using testing::rejection_detail;
using testing::test_key;

const std::string kAppId = "2021000000000001";
const std::string kMchid = "1900000001";
const std::string kMerchantSerial = "3775B6A45ACD588826D15E583A95F5DD";
const std::string kPlatformSerial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";
// Short enough that the stall test does not wait for the stalled answer.
constexpr net::ClientLimits kLimits{1000, 1000, 256 * 1024};

net::Url url_of(const std::string& text) {
  const auto url = net::parse_url(text);
  EXPECT_TRUE(url.ok()) << text;
  return url.ok() ? url.value() : net::Url{};
}

const net::HttpClient& client() {
  static const net::HttpClient instance(kLimits, testing::make_test_ca().ca_pem_path);
  return instance;
}

// One query as the caller (PaymentQuerier) makes it: the dialect's request, sent, the answer
// mapped; an exchange that brought none is a rejection, its code in `no_answer`.
channels::Result<QueryAnswer> ask(const channels::QueryDialect& dialect, const QueryTarget& target,
                                  std::error_code* no_answer = nullptr) {
  const auto now = domain::unix_time_ms();
  const auto response = client().send(dialect.request(target, now));
  if (!response.ok()) {
    if (no_answer != nullptr) {
      *no_answer = response.error();
    }
    return channels::rejected_answer("no answer: " + response.detail());
  }
  return dialect.answer(target, response.value(), now);
}

channels::AlipayQuery alipay_query(const testing::FakeAlipay& fake,
                                   const std::string& merchant = "alipay-query-merchant") {
  return channels::AlipayQuery(
      {kAppId, url_of(fake.url()), test_key(merchant).private_key, test_key("alipay").public_key});
}

channels::WechatQuery wechat_query(const testing::FakeWechatPay& fake,
                                   const std::string& merchant = "wechat-query-merchant") {
  return channels::WechatQuery({kMchid,
                                url_of(fake.url()),
                                test_key(merchant).private_key,
                                kMerchantSerial,
                                {{kPlatformSerial, test_key("wechat").public_key}}});
}

testing::FakeAlipay make_alipay() {
  return testing::FakeAlipay(kAppId, test_key("alipay-query-merchant"), test_key("alipay"));
}

testing::FakeWechatPay make_wechat() {
  return testing::FakeWechatPay(kMchid, kMerchantSerial, test_key("wechat-query-merchant"),
                                kPlatformSerial, test_key("wechat"));
}

struct Case {
  std::string payment_no;
  std::string gateway_state;
  QueryState expected;
};

void expect_mappings(const channels::QueryDialect& dialect, testing::FakeGatewayState& fake,
                     const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    fake.set_trade(c.payment_no, FakeTrade{c.gateway_state, 5000, "T-" + c.payment_no});
  }
  for (const auto& c : cases) {
    const auto result = ask(dialect, {c.payment_no, 5000});
    const auto* answer = result.ok() ? &result.value() : nullptr;
    ASSERT_NE(answer, nullptr) << c.gateway_state << ": " << rejection_detail(result);
    EXPECT_EQ(answer->state, c.expected) << c.gateway_state;
    EXPECT_EQ(answer->trade_no, "T-" + c.payment_no) << c.gateway_state;
    EXPECT_EQ(answer->amount_cents, std::optional<std::int64_t>(5000)) << c.gateway_state;
  }
  const auto unknown = ask(dialect, {"P-unknown", 5000});
  ASSERT_TRUE(unknown.ok()) << rejection_detail(unknown);
  EXPECT_EQ(unknown.value().state, QueryState::not_found);
  EXPECT_EQ(fake.refused_signatures(), 0);
}

using BadAnswers = std::vector<std::pair<FakeAnswer, std::string>>;

// Each bad answer is a rejection with its reason; the honest answer afterwards is accepted again.
void expect_rejections(const channels::QueryDialect& dialect, testing::FakeGatewayState& fake,
                       const BadAnswers& rows) {
  for (const auto& [mode, detail] : rows) {
    fake.set_answer(mode);
    EXPECT_EQ(rejection_detail(ask(dialect, {"P-1", 5000})), detail) << static_cast<int>(mode);
  }
  fake.set_answer(FakeAnswer::honest);
  const auto honest = ask(dialect, {"P-1", 5000});
  EXPECT_TRUE(honest.ok()) << rejection_detail(honest);
}

// A stalled gateway: the call returns at the client's deadline, not when the gateway answers,
// and the missing answer is a rejection.
void expect_timeout(const channels::QueryDialect& dialect, testing::FakeGatewayState& fake) {
  fake.set_answer(FakeAnswer::stall);
  std::error_code no_answer;
  const auto start = std::chrono::steady_clock::now();
  const auto result = ask(dialect, {"P-1", 5000}, &no_answer);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(kFakeStallMs));
  EXPECT_EQ(no_answer, net::errc::timed_out);
  EXPECT_EQ(rejection_detail(result), "no answer: timed out");
}

TEST(GatewayQuery, AlipayAnswersEveryTradeStatus) {
  auto fake = make_alipay();
  const auto dialect = alipay_query(fake);
  expect_mappings(dialect, fake,
                  {{"P-success", "TRADE_SUCCESS", QueryState::paid},
                   {"P-finished", "TRADE_FINISHED", QueryState::paid},
                   {"P-waiting", "WAIT_BUYER_PAY", QueryState::pending},
                   {"P-closed", "TRADE_CLOSED", QueryState::failed}});
  // A paid answer becomes the query's callback.
  const auto paid = (ask(dialect, {"P-success", 5000})).value();
  const auto callback = channels::callback_of({"P-success", 5000}, dialect.channel(), paid);
  ASSERT_TRUE(callback);
  EXPECT_EQ(callback->callback_id, "query:P-success:1");
  EXPECT_EQ(callback->channel_trade_no, "T-P-success");
}

TEST(GatewayQuery, AlipayRefusesARequestSignedWithAnotherKey) {
  auto fake = make_alipay();
  fake.set_trade("P-1", FakeTrade{"TRADE_SUCCESS", 5000, "T-1"});
  const auto result = ask(alipay_query(fake, "gateway-impostor"), {"P-1", 5000});
  EXPECT_EQ(rejection_detail(result), "Alipay answered code 40002 sub_code isv.invalid-signature");
  EXPECT_EQ(fake.refused_signatures(), 1);
}

TEST(GatewayQuery, AlipayBadAnswersAreRejections) {
  auto fake = make_alipay();
  fake.set_trade("P-1", FakeTrade{"TRADE_SUCCESS", 5000, "T-1"});
  const auto dialect = alipay_query(fake);
  expect_rejections(
      dialect, fake,
      {
          {FakeAnswer::bad_signature, "signature does not verify"},
          {FakeAnswer::unsigned_answer, "sign missing or not a string"},
          {FakeAnswer::other_payment, "out_trade_no missing or another payment's"},
          {FakeAnswer::other_amount, "total_amount differs from the payment's amount"},
          {FakeAnswer::malformed_json, "answer is not JSON"},
      });
}

TEST(GatewayQuery, AlipayAnswerPastTheDeadlineIsTheClientsTimeout) {
  auto fake = make_alipay();
  fake.set_trade("P-1", FakeTrade{"TRADE_SUCCESS", 5000, "T-1"});
  expect_timeout(alipay_query(fake), fake);
}

TEST(GatewayQuery, WechatAnswersEveryTradeState) {
  auto fake = make_wechat();
  expect_mappings(wechat_query(fake), fake,
                  {{"P-success", "SUCCESS", QueryState::paid},
                   {"P-payerror", "PAYERROR", QueryState::failed},
                   {"P-closed", "CLOSED", QueryState::failed},
                   {"P-revoked", "REVOKED", QueryState::failed},
                   {"P-notpay", "NOTPAY", QueryState::pending},
                   {"P-userpaying", "USERPAYING", QueryState::pending}});
}

TEST(GatewayQuery, WechatRefusesARequestSignedWithAnotherKey) {
  auto fake = make_wechat();
  fake.set_trade("P-1", FakeTrade{"SUCCESS", 5000, "T-1"});
  const auto result = ask(wechat_query(fake, "gateway-impostor"), {"P-1", 5000});
  EXPECT_EQ(rejection_detail(result), "unexpected HTTP status 401");
  EXPECT_EQ(fake.refused_signatures(), 1);
}

TEST(GatewayQuery, WechatBadAnswersAreRejections) {
  auto fake = make_wechat();
  fake.set_trade("P-1", FakeTrade{"SUCCESS", 5000, "T-1"});
  const auto dialect = wechat_query(fake);
  expect_rejections(
      dialect, fake,
      {
          {FakeAnswer::bad_signature, "answer signature: signature does not verify"},
          {FakeAnswer::unsigned_answer,
           "answer signature: Wechatpay-Timestamp/-Nonce/-Signature/-Serial missing, empty or too "
           "long"},
          {FakeAnswer::unknown_serial,
           "answer signature: Wechatpay-Serial names no configured key"},
          {FakeAnswer::probe_signature,
           "answer signature: probe signature (WECHATPAY/SIGNTEST/) refused"},
          {FakeAnswer::stale_timestamp, "answer signature: timestamp outside the accepted window"},
          {FakeAnswer::other_payment, "out_trade_no is another payment's"},
          {FakeAnswer::other_amount, "amount.total differs from the payment's amount"},
          {FakeAnswer::malformed_json, "answer is not JSON"},
      });
  // A bad answer to a not-found query is refused too: the 404 is signed like any answer.
  fake.set_answer(FakeAnswer::bad_signature);
  EXPECT_EQ(rejection_detail(ask(dialect, {"P-unknown", 5000})),
            "answer signature: signature does not verify");
}

TEST(GatewayQuery, WechatAnswerPastTheDeadlineIsTheClientsTimeout) {
  auto fake = make_wechat();
  fake.set_trade("P-1", FakeTrade{"SUCCESS", 5000, "T-1"});
  expect_timeout(wechat_query(fake), fake);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

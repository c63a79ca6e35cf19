// Unit tests for the `wechat` query dialect (SPEC §10): the signed GET, the answer's header
// signature, every trade_state mapping and every rejection.
#include "channels/wechat/wechat_query.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "channels/gateway_signer.hpp"
#include "support/fake_gateways.hpp"
#include "support/test_keys.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::rejection_detail;
using testing::test_key;

constexpr std::int64_t kNow = 1'700'000'000'000;
constexpr std::int64_t kNowSeconds = kNow / 1000;
const std::string kMchid = "1900000001";
const std::string kMerchantSerial = "3775B6A45ACD588826D15E583A95F5DD";
const std::string kPlatformSerial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";
const QueryTarget kTarget{"P-0001", 5000};

const testing::TestKeyPair& merchant() {
  return test_key("wechat-query-merchant");
}
const testing::TestKeyPair& platform() {
  return test_key("wechat");
}

WechatQuery make_query(const std::string& gateway = "https://api.mch.weixin.test") {
  return WechatQuery(WechatQueryConfig{kMchid,
                                       net::parse_url(gateway).value(),
                                       merchant().private_key,
                                       kMerchantSerial,
                                       {{kPlatformSerial, platform().public_key}}});
}

std::string transaction_body(const std::string& state, std::optional<std::int64_t> fen = 5000,
                             const std::string& out_trade_no = "P-0001",
                             const std::string& mchid = kMchid) {
  WechatTransaction transaction;
  transaction.mchid = mchid;
  transaction.out_trade_no = out_trade_no;
  transaction.transaction_id = "4200000000202612010000000001";
  transaction.trade_state = state;
  transaction.amount_total_fen = fen;
  return wechat_transaction_json(transaction, kNow);
}

// An answer signed the way WeChat Pay signs it, header names lower-cased as the client gives them.
net::Response signed_response(int status, std::string body,
                              const testing::TestKeyPair& key = platform(),
                              const std::string& serial = kPlatformSerial,
                              std::int64_t timestamp_s = kNowSeconds) {
  const auto signed_headers = wechat_sign(body, serial, timestamp_s, key.private_key.get());
  net::Response response;
  response.status = status;
  response.body = std::move(body);
  response.headers = {{"content-type", "application/json"},
                      {"wechatpay-timestamp", signed_headers.timestamp},
                      {"wechatpay-nonce", signed_headers.nonce},
                      {"wechatpay-signature", signed_headers.signature},
                      {"wechatpay-serial", signed_headers.serial}};
  return response;
}

Result<QueryAnswer> ask(const net::Response& response, const QueryTarget& target = kTarget,
                        std::int64_t now_ms = kNow) {
  return make_query().answer(target, response, now_ms);
}

TEST(WechatQuery, SignContentIsMethodTargetTimestampNonceBodyEachOnALine) {
  EXPECT_EQ(wechat_request_sign_content("GET", "/v3/pay/transactions/out-trade-no/P?mchid=1",
                                        "1700000000", "NONCE", ""),
            "GET\n/v3/pay/transactions/out-trade-no/P?mchid=1\n1700000000\nNONCE\n\n");
}

TEST(WechatQuery, RequestIsASignedGetUnderTheGatewayPath) {
  const auto request = make_query().request(kTarget, kNow);
  EXPECT_EQ(request.method, "GET");
  EXPECT_TRUE(request.url.tls);
  EXPECT_EQ(request.url.host, "api.mch.weixin.test");
  EXPECT_EQ(request.url.target, "/v3/pay/transactions/out-trade-no/P-0001?mchid=1900000001");
  EXPECT_TRUE(request.body.empty());
  std::string authorization;
  std::string accept;
  for (const auto& [name, value] : request.headers) {
    if (name == "Authorization") {
      authorization = value;
    } else if (name == "Accept") {
      accept = value;
    }
  }
  EXPECT_EQ(accept, "application/json");
  ASSERT_TRUE(authorization.starts_with("WECHATPAY2-SHA256-RSA2048 mchid=\"")) << authorization;
  const auto fields = testing::parse_wechat_authorization(authorization);
  ASSERT_TRUE(fields) << authorization;
  EXPECT_EQ(fields->at("mchid"), kMchid);
  EXPECT_EQ(fields->at("serial_no"), kMerchantSerial);
  EXPECT_EQ(fields->at("timestamp"), "1700000000");
  EXPECT_EQ(fields->at("nonce_str").size(), 32U);
  const std::string message =
      "GET\n" + request.url.target + "\n1700000000\n" + fields->at("nonce_str") + "\n\n";
  const auto signature = codec::base64_decode(fields->at("signature"), 1024);
  ASSERT_TRUE(signature);
  const std::array<std::string_view, 1> pieces{message};
  EXPECT_TRUE(codec::rsa_sha256_verify(merchant().public_key.get(), pieces, *signature));
  // A fresh nonce each time.
  const auto again =
      testing::parse_wechat_authorization(make_query().request(kTarget, kNow).headers[0].second);
  ASSERT_TRUE(again);
  EXPECT_NE(again->at("nonce_str"), fields->at("nonce_str"));
}

TEST(WechatQuery, TheTargetKeepsTheGatewayPathAndEncodesThePaymentNumber) {
  EXPECT_EQ(make_query("https://gw.test/proxy/").target_for("P 1/2+3"),
            "/proxy/v3/pay/transactions/out-trade-no/P%201%2F2%2B3?mchid=1900000001");
}

TEST(WechatQuery, EveryTradeStateMaps) {
  struct Row {
    const char* state;
    QueryState expected;
  };
  const std::array<Row, 8> rows{{{"SUCCESS", QueryState::paid},
                                 {"PAYERROR", QueryState::failed},
                                 {"CLOSED", QueryState::failed},
                                 {"REVOKED", QueryState::failed},
                                 {"NOTPAY", QueryState::pending},
                                 {"USERPAYING", QueryState::pending},
                                 {"REFUND", QueryState::pending},
                                 {"ACCEPT", QueryState::pending}}};
  for (const auto& row : rows) {
    const auto result = ask(signed_response(200, transaction_body(row.state)));
    const auto* answer = result.ok() ? &result.value() : nullptr;
    ASSERT_NE(answer, nullptr) << row.state << ": " << rejection_detail(result);
    EXPECT_EQ(answer->state, row.expected) << row.state;
    EXPECT_EQ(answer->trade_no, "4200000000202612010000000001") << row.state;
    EXPECT_EQ(answer->amount_cents, std::optional<std::int64_t>(5000)) << row.state;
  }
}

TEST(WechatQuery, ASigned404OrderNotExistIsNotFound) {
  const auto result =
      ask(signed_response(404, R"({"code":"ORDER_NOT_EXIST","message":"order not found"})"));
  ASSERT_TRUE(result.ok()) << rejection_detail(result);
  EXPECT_EQ(result.value().state, QueryState::not_found);
  auto unsigned_404 = signed_response(404, R"({"code":"ORDER_NOT_EXIST"})");
  unsigned_404.headers.resize(1);
  EXPECT_NE(rejection_detail(ask(unsigned_404)).find("answer signature"), std::string::npos);
}

TEST(WechatQuery, AnswersThatChangeNothingAreRejections) {
  struct Row {
    std::string name;
    net::Response response;
    std::string detail;
  };
  const std::string paid = transaction_body("SUCCESS");
  auto probe = signed_response(200, paid);
  probe.headers[3].second = "WECHATPAY/SIGNTEST/" + probe.headers[3].second;
  auto tampered = signed_response(200, paid);
  tampered.body = transaction_body("SUCCESS", 5000, "P-0001 ");
  const std::vector<Row> rows{
      {"impostor key", signed_response(200, paid, test_key("gateway-impostor")),
       "answer signature: signature does not verify"},
      {"body changed after signing", tampered, "answer signature: signature does not verify"},
      {"unknown serial", signed_response(200, paid, platform(), "UNKNOWN"),
       "answer signature: Wechatpay-Serial names no configured key"},
      {"probe", probe, "answer signature: probe signature (WECHATPAY/SIGNTEST/) refused"},
      {"stale", signed_response(200, paid, platform(), kPlatformSerial, kNowSeconds - 301),
       "answer signature: timestamp outside the accepted window"},
      {"from the future",
       signed_response(200, paid, platform(), kPlatformSerial, kNowSeconds + 301),
       "answer signature: timestamp outside the accepted window"},
      {"another payment", signed_response(200, transaction_body("SUCCESS", 5000, "P-0002")),
       "out_trade_no is another payment's"},
      {"another amount", signed_response(200, transaction_body("SUCCESS", 5001)),
       "amount.total differs from the payment's amount"},
      {"closed, another amount", signed_response(200, transaction_body("CLOSED", 1)),
       "amount.total differs from the payment's amount"},
      {"paid without amount", signed_response(200, transaction_body("SUCCESS", std::nullopt)),
       "transaction: amount missing"},
      {"another merchant",
       signed_response(200, transaction_body("SUCCESS", 5000, "P-0001", "1900000002")),
       "transaction: mchid missing or not this merchant's"},
      {"malformed JSON", signed_response(200, "{\"mchid\":"), "answer is not JSON"},
      {"404 of another kind", signed_response(404, R"({"code":"RESOURCE_NOT_EXISTS"})"),
       "WeChat Pay answered 404 code RESOURCE_NOT_EXISTS"},
      {"404 not JSON", signed_response(404, "not found"), "the 404 answer is not a JSON object"},
      {"500", signed_response(500, R"({"code":"SYSTEM_ERROR"})"), "unexpected HTTP status 500"},
      {"401", signed_response(401, R"({"code":"SIGN_ERROR"})"), "unexpected HTTP status 401"},
      {"empty", signed_response(200, ""), "answer empty or too large"},
  };
  for (const auto& row : rows) {
    EXPECT_EQ(rejection_detail(ask(row.response)), row.detail) << row.name;
  }
}

TEST(WechatQuery, EveryTruncationOfAnAnswerIsARejectionAndNothingThrows) {
  const auto full = signed_response(200, transaction_body("SUCCESS"));
  const auto query = make_query();
  for (std::size_t size = 0; size < full.body.size(); ++size) {
    auto cut = full;
    cut.body.resize(size);
    std::optional<Result<QueryAnswer>> result;
    ASSERT_NO_THROW(result.emplace(query.answer(kTarget, cut, kNow))) << size;
    EXPECT_FALSE(result->ok()) << size;
  }
}

TEST(WechatQuery, ConstructorRefusesAnIncompleteConfig) {
  const auto url = net::parse_url("https://api.mch.weixin.test").value();
  const WechatPlatformKeys keys{{kPlatformSerial, platform().public_key}};
  EXPECT_THROW(WechatQuery({"", url, merchant().private_key, kMerchantSerial, keys}),
               std::invalid_argument);
  EXPECT_THROW(WechatQuery({kMchid, url, nullptr, kMerchantSerial, keys}), std::invalid_argument);
  EXPECT_THROW(WechatQuery({kMchid, url, merchant().private_key, "", keys}), std::invalid_argument);
  // A quote would end the Authorization parameter early.
  EXPECT_THROW(WechatQuery({kMchid, url, merchant().private_key, "SERIAL\",x=\"", keys}),
               std::invalid_argument);
  EXPECT_THROW(WechatQuery({"190 01", url, merchant().private_key, kMerchantSerial, keys}),
               std::invalid_argument);
  EXPECT_THROW(WechatQuery({kMchid, url, merchant().private_key, kMerchantSerial, {}}),
               std::invalid_argument);
  EXPECT_THROW(WechatQuery({kMchid,
                            url,
                            merchant().private_key,
                            kMerchantSerial,
                            {{kPlatformSerial, platform().public_key},
                             {kPlatformSerial, platform().public_key}}}),
               std::invalid_argument);
  EXPECT_THROW(WechatQuery({kMchid, url, merchant().private_key, kMerchantSerial, keys, -1}),
               std::invalid_argument);
  EXPECT_EQ(make_query().channel(), domain::Channel::wechat);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

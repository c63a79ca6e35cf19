// Unit tests for the `alipay` query dialect (SPEC §10): the signed request, the raw-member scan,
// every trade_status mapping and every rejection.
#include "channels/alipay/alipay_query.hpp"

#include <gtest/gtest.h>

#include <array>

#include <nlohmann/json.hpp>

#include "codec/text.hpp"
#include "support/fake_gateways.hpp"
#include "support/test_keys.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::rejection_detail;
using testing::test_key;

constexpr std::int64_t kNow = 1'700'000'000'000;  // 2023-11-14 22:13:20 UTC
const std::string kAppId = "2021000000000001";
const QueryTarget kTarget{"P-0001", 5000};

const testing::TestKeyPair& merchant() {
  return test_key("alipay-query-merchant");
}
const testing::TestKeyPair& alipay() {
  return test_key("alipay");
}

AlipayQuery make_query() {
  return AlipayQuery(
      AlipayQueryConfig{kAppId, net::parse_url("https://openapi.alipay.test/gateway.do").value(),
                        merchant().private_key, alipay().public_key});
}

// An alipay_trade_query_response value in Alipay's own member order (not sorted).
std::string trade_member(const std::string& status, const std::string& amount = "50.00",
                         const std::string& out_trade_no = "P-0001",
                         const std::string& trade_no = "2026120122001400001") {
  std::string text = R"({"code":"10000","msg":"Success","buyer_logon_id":"159****5620",)";
  text += R"("out_trade_no":")" + out_trade_no + "\",";
  if (!trade_no.empty()) {
    text += R"("trade_no":")" + trade_no + "\",";
  }
  text += R"("trade_status":")" + status + "\",";
  if (!amount.empty()) {
    text += R"("total_amount":")" + amount + "\",";
  }
  text += R"("send_pay_date":"2026-12-01 18:00:00"})";
  return text;
}

std::string sign_of(const std::string& content, const testing::TestKeyPair& key = alipay()) {
  return codec::base64_encode(codec::rsa_sha256_sign(key.private_key.get(), content));
}

std::string signed_body(const std::string& member, const testing::TestKeyPair& key = alipay()) {
  return R"({"alipay_trade_query_response":)" + member + R"(,"sign":")" + sign_of(member, key) +
         "\"}";
}

net::Response ok(std::string body) {
  net::Response response;
  response.status = 200;
  response.body = std::move(body);
  return response;
}

Result<QueryAnswer> ask(const std::string& body, const QueryTarget& target = kTarget) {
  return make_query().answer(target, ok(body), kNow);
}

TEST(AlipayQuery, TimestampIsChinaStandardTime) {
  const auto params = alipay_query_params(kAppId, "P-0001", kNow);
  const auto it = std::find_if(params.begin(), params.end(),
                               [](const auto& p) { return p.first == "timestamp"; });
  ASSERT_NE(it, params.end());
  EXPECT_EQ(it->second, "2023-11-15 06:13:20");
  // 16:00 UTC is midnight of the next day in UTC+8.
  EXPECT_EQ(codec::china_time(1'699'977'600'000, false), "2023-11-15 00:00:00");
}

TEST(AlipayQuery, SignContentIsEveryParamButSignSortedByKeySignTypeIncluded) {
  auto params = alipay_query_params(kAppId, "P-0001", kNow);
  params.emplace_back("sign", "must-not-be-signed");
  EXPECT_EQ(alipay_request_sign_content(params),
            "app_id=2021000000000001&biz_content={\"out_trade_no\":\"P-0001\"}&charset=utf-8"
            "&format=JSON&method=alipay.trade.query&sign_type=RSA2"
            "&timestamp=2023-11-15 06:13:20&version=1.0");
}

TEST(AlipayQuery, RequestIsAFormPostSignedWithTheMerchantKey) {
  const auto request = make_query().request(kTarget, kNow);
  EXPECT_EQ(request.method, "POST");
  EXPECT_TRUE(request.url.tls);
  EXPECT_EQ(request.url.host, "openapi.alipay.test");
  EXPECT_EQ(request.url.target, "/gateway.do");
  ASSERT_FALSE(request.headers.empty());
  EXPECT_EQ(request.headers[0].first, "Content-Type");
  EXPECT_EQ(request.headers[0].second, "application/x-www-form-urlencoded;charset=utf-8");
  auto parsed = parse_alipay_form(request.body);
  ASSERT_TRUE(parsed.ok()) << request.body;
  const auto& form = parsed.value();
  EXPECT_EQ(form.sign_type, std::optional<std::string>("RSA2"));
  ASSERT_NE(form.find("biz_content"), nullptr);
  EXPECT_EQ(*form.find("biz_content"), R"({"out_trade_no":"P-0001"})");
  EXPECT_EQ(*form.find("method"), "alipay.trade.query");
  EXPECT_EQ(*form.find("timestamp"), "2023-11-15 06:13:20");
  const auto signature = codec::base64_decode(form.sign, kAlipayMaxSignatureBytes);
  ASSERT_TRUE(signature);
  const std::string expected =
      alipay_request_sign_content(alipay_query_params(kAppId, "P-0001", kNow));
  const std::array<std::string_view, 1> right{expected};
  EXPECT_TRUE(codec::rsa_sha256_verify(merchant().public_key.get(), right, *signature));
  // Signed over the notify's content (sign_type left out) it would not verify at Alipay.
  const std::string notify_content = alipay_sign_content(form);
  const std::array<std::string_view, 1> wrong{notify_content};
  EXPECT_FALSE(codec::rsa_sha256_verify(merchant().public_key.get(), wrong, *signature));
}

TEST(AlipayQuery, RawMemberIsTheExactBytesAsSent) {
  const std::string value = R"({ "b" : "x}\"{" , "a":[1,{"c":"]"}] })";
  const std::string text = " {\"sign\" : \"abc\",\n\"resp\":" + value + " ,\"n\":-1.5e3}\r\n";
  EXPECT_EQ(raw_json_member(text, "resp"), std::optional<std::string_view>(value));
  EXPECT_EQ(raw_json_member(text, "sign"), std::optional<std::string_view>("\"abc\""));
  EXPECT_EQ(raw_json_member(text, "n"), std::optional<std::string_view>("-1.5e3"));
  EXPECT_EQ(raw_json_member(text, "absent"), std::nullopt);
  EXPECT_EQ(raw_json_member(R"({"a\"b":1})", "a\\\"b"), std::optional<std::string_view>("1"));
}

TEST(AlipayQuery, RawMemberRefusesWhatItCannotScanOrWhatIsAmbiguous) {
  EXPECT_EQ(raw_json_member(R"({"r":{},"r":{}})", "r"), std::nullopt);  // twice
  EXPECT_EQ(raw_json_member(R"([{"r":1}])", "r"), std::nullopt);        // not an object
  EXPECT_EQ(raw_json_member(R"({"r":1} x)", "r"), std::nullopt);        // trailing bytes
  EXPECT_EQ(raw_json_member(R"({"r":{"a":1})", "r"), std::nullopt);     // unclosed
  EXPECT_EQ(raw_json_member(R"({"r":"abc)", "r"), std::nullopt);        // unclosed string
  EXPECT_EQ(raw_json_member(R"({"r" 1})", "r"), std::nullopt);          // no colon
  EXPECT_EQ(raw_json_member(R"({"r":})", "r"), std::nullopt);           // no value
  EXPECT_EQ(raw_json_member("", "r"), std::nullopt);
  EXPECT_EQ(raw_json_member("{}", "r"), std::nullopt);
  const std::string deep = "{\"r\":" + std::string(kAlipayAnswerDepthMax + 1, '[') +
                           std::string(kAlipayAnswerDepthMax + 1, ']') + "}";
  EXPECT_EQ(raw_json_member(deep, "r"), std::nullopt);
  const std::string ok_depth = "{\"r\":" + std::string(kAlipayAnswerDepthMax, '[') +
                               std::string(kAlipayAnswerDepthMax, ']') + "}";
  EXPECT_TRUE(raw_json_member(ok_depth, "r"));
  std::string many = "{";
  for (std::size_t i = 0; i <= kAlipayAnswerMembersMax; ++i) {
    many += "\"k" + std::to_string(i) + "\":1,";
  }
  many += "\"r\":1}";
  EXPECT_EQ(raw_json_member(many, "r"), std::nullopt);
}

TEST(AlipayQuery, EveryTradeStatusMaps) {
  struct Row {
    const char* status;
    QueryState state;
  };
  const std::array<Row, 4> rows{{{"TRADE_SUCCESS", QueryState::paid},
                                 {"TRADE_FINISHED", QueryState::paid},
                                 {"WAIT_BUYER_PAY", QueryState::pending},
                                 {"TRADE_CLOSED", QueryState::failed}}};
  for (const auto& row : rows) {
    const auto result = ask(signed_body(trade_member(row.status)));
    const auto* answer = result.ok() ? &result.value() : nullptr;
    ASSERT_NE(answer, nullptr) << row.status << ": " << rejection_detail(result);
    EXPECT_EQ(answer->state, row.state) << row.status;
    EXPECT_EQ(answer->trade_no, "2026120122001400001") << row.status;
    EXPECT_EQ(answer->amount_cents, std::optional<std::int64_t>(5000)) << row.status;
  }
}

TEST(AlipayQuery, AmountIsYuanTextToExactCents) {
  const auto result = ask(signed_body(trade_member("TRADE_SUCCESS", "0.07")), {"P-0001", 7});
  ASSERT_TRUE(result.ok()) << rejection_detail(result);
  EXPECT_EQ(result.value().amount_cents, std::optional<std::int64_t>(7));
}

TEST(AlipayQuery, PendingAndClosedNeedNoTradeNoOrAmount) {
  const auto pending = ask(signed_body(trade_member("WAIT_BUYER_PAY", "", "P-0001", "")));
  ASSERT_TRUE(pending.ok()) << rejection_detail(pending);
  EXPECT_EQ(pending.value().state, QueryState::pending);
  EXPECT_EQ(pending.value().amount_cents, std::nullopt);
}

TEST(AlipayQuery, TradeNotExistIsNotFoundAndSignedLikeAnyAnswer) {
  const std::string member =
      R"({"code":"40004","msg":"Business Failed","sub_code":"ACQ.TRADE_NOT_EXIST",)"
      R"("sub_msg":"交易不存在","out_trade_no":"P-0001"})";
  const auto result = ask(signed_body(member));
  ASSERT_TRUE(result.ok()) << rejection_detail(result);
  EXPECT_EQ(result.value().state, QueryState::not_found);
  EXPECT_EQ(rejection_detail(ask(signed_body(member, test_key("gateway-impostor")))),
            "signature does not verify");
  const std::string other =
      R"({"code":"40004","sub_code":"ACQ.TRADE_NOT_EXIST","out_trade_no":"P-2"})";
  EXPECT_EQ(rejection_detail(ask(signed_body(other))),
            "the not-found answer names another payment");
}

TEST(AlipayQuery, OtherGatewayCodesAreRejectionsThatQuoteOnlySafeCodes) {
  EXPECT_EQ(rejection_detail(ask(signed_body(
                R"({"code":"40004","msg":"Business Failed","sub_code":"ACQ.SYSTEM_ERROR"})"))),
            "Alipay answered code 40004 sub_code ACQ.SYSTEM_ERROR");
  EXPECT_EQ(rejection_detail(ask(signed_body(R"({"code":"40002","sub_code":"bad\ncode"})"))),
            "Alipay answered code 40002 sub_code ?");
  EXPECT_EQ(rejection_detail(ask(signed_body(R"({"msg":"no code"})"))),
            "Alipay answered code ? sub_code ?");
}

TEST(AlipayQuery, AnswersThatChangeNothingAreRejections) {
  struct Row {
    std::string name;
    std::string body;
    std::string detail;
  };
  const std::string paid = trade_member("TRADE_SUCCESS");
  const std::vector<Row> rows{
      {"impostor key", signed_body(paid, test_key("gateway-impostor")),
       "signature does not verify"},
      {"no sign", R"({"alipay_trade_query_response":)" + paid + "}",
       "sign missing or not a string"},
      {"sign not base64", R"({"alipay_trade_query_response":)" + paid + R"(,"sign":"***"})",
       "sign is not base64"},
      {"sign a number", R"({"alipay_trade_query_response":)" + paid + R"(,"sign":5})",
       "sign missing or not a string"},
      {"another payment", signed_body(trade_member("TRADE_SUCCESS", "50.00", "P-0002")),
       "out_trade_no missing or another payment's"},
      {"another amount", signed_body(trade_member("TRADE_SUCCESS", "50.01")),
       "total_amount differs from the payment's amount"},
      {"closed, another amount", signed_body(trade_member("TRADE_CLOSED", "49.99")),
       "total_amount differs from the payment's amount"},
      {"amount with 3 decimals", signed_body(trade_member("TRADE_SUCCESS", "50.001")),
       "total_amount is not yuan with at most 2 decimals"},
      {"paid without amount", signed_body(trade_member("TRADE_SUCCESS", "")),
       "total_amount missing from a paid answer"},
      {"paid without trade_no", signed_body(trade_member("TRADE_SUCCESS", "50.00", "P-0001", "")),
       "trade_no missing from a paid answer"},
      {"unknown status", signed_body(trade_member("TRADE_PENDING")),
       "trade_status missing or not one Alipay documents"},
      {"not JSON", "{\"alipay_trade_query_response\":{", "answer is not JSON"},
      {"empty", "", "answer empty or too large"},
      {"too large", std::string(kGatewayBodyBytesMax + 1, ' '), "answer empty or too large"},
      {"member twice",
       R"({"alipay_trade_query_response":)" + paid + R"(,"alipay_trade_query_response":)" + paid +
           R"(,"sign":")" + sign_of(paid) + "\"}",
       "alipay_trade_query_response missing, repeated or not scannable"},
      {"gateway error", R"({"error_response":{"code":"20001"},"sign":"AAAA"})",
       "Alipay answered error_response"},
  };
  for (const auto& row : rows) {
    EXPECT_EQ(rejection_detail(ask(row.body)), row.detail) << row.name;
  }
}

TEST(AlipayQuery, TheSignatureCoversTheRawBytesNotAReserialisation) {
  const std::string spaced = R"({ "code": "10000", "out_trade_no": "P-0001", "trade_no": "T1",)"
                             R"( "trade_status": "TRADE_SUCCESS", "total_amount": "50.00" })";
  const auto as_sent =
      ask(R"({"alipay_trade_query_response":)" + spaced + R"(,"sign":")" + sign_of(spaced) + "\"}");
  ASSERT_TRUE(as_sent.ok()) << rejection_detail(as_sent);
  const std::string reserialised = nlohmann::json::parse(spaced).dump();
  ASSERT_NE(reserialised, spaced);
  EXPECT_EQ(rejection_detail(ask(R"({"alipay_trade_query_response":)" + spaced + R"(,"sign":")" +
                                 sign_of(reserialised) + "\"}")),
            "signature does not verify");
}

TEST(AlipayQuery, AnHttpStatusOtherThan200IsARejection) {
  auto response = ok(signed_body(trade_member("TRADE_SUCCESS")));
  response.status = 502;
  EXPECT_EQ(rejection_detail(make_query().answer(kTarget, response, kNow)),
            "unexpected HTTP status 502");
  response.status = 0;  // no answer at all: the client's error
  EXPECT_EQ(rejection_detail(make_query().answer(kTarget, response, kNow)),
            "unexpected HTTP status 0");
}

TEST(AlipayQuery, EveryTruncationOfAnAnswerIsARejectionAndNothingThrows) {
  const std::string body = signed_body(trade_member("TRADE_SUCCESS"));
  const auto query = make_query();
  for (std::size_t size = 0; size < body.size(); ++size) {
    std::optional<Result<QueryAnswer>> result;
    ASSERT_NO_THROW(result.emplace(query.answer(kTarget, ok(body.substr(0, size)), kNow))) << size;
    EXPECT_FALSE(result->ok()) << size;
  }
}

TEST(AlipayQuery, ConstructorRefusesAnIncompleteConfig) {
  const auto url = net::parse_url("https://openapi.alipay.test/gateway.do").value();
  EXPECT_THROW(AlipayQuery({"", url, merchant().private_key, alipay().public_key}),
               std::invalid_argument);
  EXPECT_THROW(AlipayQuery({kAppId, url, nullptr, alipay().public_key}), std::invalid_argument);
  EXPECT_THROW(AlipayQuery({kAppId, url, merchant().private_key, nullptr}), std::invalid_argument);
  EXPECT_THROW(AlipayQuery({kAppId, net::Url{}, merchant().private_key, alipay().public_key}),
               std::invalid_argument);
  EXPECT_EQ(make_query().channel(), domain::Channel::alipay);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

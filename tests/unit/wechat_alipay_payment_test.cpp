// Unit tests for the wechat and alipay payment dialects (SPEC §16): the signed create and close
// requests in the gateways' own formats, and every class of their answers — created or closed,
// paid, refused, and the answers that prove nothing (bad or missing signature, another payment,
// malformed).
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include <nlohmann/json.hpp>

#include "channels/alipay/alipay_channel.hpp"
#include "channels/alipay/alipay_payment.hpp"
#include "channels/gateway_signer.hpp"
#include "channels/wechat/wechat_payment.hpp"
#include "codec/crypto.hpp"
#include "support/fake_gateways.hpp"
#include "support/rejections.hpp"
#include "support/test_keys.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using testing::rejection_detail;
using testing::test_key;

constexpr std::int64_t kNow = 1'700'000'000'000;
// 2026-12-08T10:00:00+08:00.
constexpr std::int64_t kExpires = 1'796'695'200'000;
const CreateTarget kCreate{
    "P-0001",         "O-0001", 5000, kExpires, "https://seatflow.test/api/payment/notify/wechat",
    "2 seats, Hall A"};
const CloseTarget kClose{"P-0001", ""};

const testing::TestKeyPair& impostor() {
  return test_key("gateway-impostor");
}

// The Authorization's signature verifies with the merchant's public key over the request as sent.
void expect_wechat_signed(const net::Request& request) {
  std::string authorization;
  for (const auto& [name, value] : request.headers) {
    if (name == "Authorization") {
      authorization = value;
    }
  }
  const auto fields = testing::parse_wechat_authorization(authorization);
  ASSERT_TRUE(fields) << authorization;
  EXPECT_EQ(fields->at("mchid"), "1900000001");
  const std::string message = request.method + "\n" + request.url.target + "\n" +
                              fields->at("timestamp") + "\n" + fields->at("nonce_str") + "\n" +
                              request.body + "\n";
  const std::array<std::string_view, 1> pieces{message};
  const auto signature = codec::base64_decode(fields->at("signature"), 1024);
  ASSERT_TRUE(signature);
  EXPECT_TRUE(codec::rsa_sha256_verify(test_key("wechat-query-merchant").public_key.get(), pieces,
                                       *signature));
}

// --- wechat -----------------------------------------------------------------------------------

const std::string kPlatformSerial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";

WechatPayment wechat() {
  return WechatPayment(WechatQueryConfig{"1900000001",
                                         net::parse_url("https://api.mch.weixin.test/").value(),
                                         test_key("wechat-query-merchant").private_key,
                                         "3775B6A45ACD588826D15E583A95F5DD",
                                         {{kPlatformSerial, test_key("wechat").public_key}}},
                       "wx8888888888888888");
}

enum class Signed : std::uint8_t { platform, impostor, none };

net::Response wechat_answer(int status, std::string body, Signed by = Signed::platform) {
  net::Response response{status, {{"content-type", "application/json"}}, std::move(body)};
  if (by != Signed::none) {
    const auto& key = by == Signed::platform ? test_key("wechat") : impostor();
    const auto headers =
        wechat_sign(response.body, kPlatformSerial, kNow / 1000, key.private_key.get());
    response.headers.insert(response.headers.end(), {{"wechatpay-timestamp", headers.timestamp},
                                                     {"wechatpay-nonce", headers.nonce},
                                                     {"wechatpay-signature", headers.signature},
                                                     {"wechatpay-serial", headers.serial}});
  }
  return response;
}

TEST(WechatPayment, CreateIsASignedNativeOrderWithTheDeadlineInChinaTime) {
  const auto request = wechat().create_request(kCreate, kNow).value();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url.target, "/v3/pay/transactions/native");
  const auto body = json::parse(request.body);
  EXPECT_EQ(body["appid"], "wx8888888888888888");
  EXPECT_EQ(body["mchid"], "1900000001");
  EXPECT_EQ(body["description"], "2 seats, Hall A");
  EXPECT_EQ(body["out_trade_no"], "P-0001");
  EXPECT_EQ(body["time_expire"], "2026-12-08T10:00:00+08:00");
  EXPECT_EQ(body["notify_url"], kCreate.notify_url);
  EXPECT_EQ(body["amount"], json({{"total", 5000}, {"currency", "CNY"}}));
  expect_wechat_signed(request);
  // No deadline: no time_expire; nowhere to notify: nothing to send.
  auto open_ended = kCreate;
  open_ended.expires_at_ms = 0;
  EXPECT_FALSE(
      json::parse(wechat().create_request(open_ended, kNow).value().body).contains("time_expire"));
  auto no_notify = kCreate;
  no_notify.notify_url.clear();
  EXPECT_EQ(testing::reason_of(wechat().create_request(no_notify, kNow)), errc::unusable);
}

TEST(WechatPayment, CreateAnswersAreCreatedRefusedOrRejected) {
  const auto created =
      wechat()
          .create_answer(
              kCreate,
              wechat_answer(200, R"({"code_url":"weixin://wxpay/bizpayurl?pr=p4lpSuKzz"})"), kNow)
          .value();
  EXPECT_TRUE(created.created);
  EXPECT_EQ(created.kind, PayKind::qr);
  EXPECT_EQ(created.field, "codeUrl");
  EXPECT_EQ(created.value, "weixin://wxpay/bizpayurl?pr=p4lpSuKzz");
  const auto refused = wechat()
                           .create_answer(kCreate,
                                          wechat_answer(403, R"({"code":"OUT_TRADE_NO_USED",)"
                                                             R"("message":"used"})"),
                                          kNow)
                           .value();
  EXPECT_FALSE(refused.created);
  EXPECT_EQ(refused.reason, "OUT_TRADE_NO_USED");
  const std::string ok = R"({"code_url":"weixin://wxpay/bizpayurl?pr=p4lpSuKzz"})";
  const std::vector<std::pair<net::Response, std::string>> rejected = {
      {wechat_answer(200, ok, Signed::impostor), "answer signature: signature does not verify"},
      {wechat_answer(200, ok, Signed::none), "answer signature: "},
      {wechat_answer(200, R"({"code_url":""})"), "code_url missing or not a pay value"},
      {wechat_answer(200, R"({"code_url":"weixin://a b"})"), "code_url missing or not a pay value"},
      {wechat_answer(200, "{not json"), "answer is not a JSON object"},
      {wechat_answer(500, "oops"), "a 500 answer without an error code"},
  };
  for (const auto& [response, detail] : rejected) {
    const auto answer = wechat().create_answer(kCreate, response, kNow);
    EXPECT_EQ(testing::reason_of(answer), errc::rejected_answer) << response.body;
    EXPECT_EQ(rejection_detail(answer).rfind(detail, 0), 0U) << rejection_detail(answer);
  }
}

TEST(WechatPayment, CloseIsASignedPostOfTheMchidAndA204IsSignedOverNothing) {
  const auto request = wechat().close_request({"P 1/2", ""}, kNow).value();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url.target, "/v3/pay/transactions/out-trade-no/P%201%2F2/close");
  EXPECT_EQ(json::parse(request.body), json({{"mchid", "1900000001"}}));
  expect_wechat_signed(request);
  struct Row {
    net::Response response;
    CloseState state;
    std::string reason;
  };
  const std::vector<Row> rows = {
      {wechat_answer(204, ""), CloseState::closed, ""},
      {wechat_answer(400, R"({"code":"ORDERPAID","message":"paid"})"), CloseState::paid,
       "ORDERPAID"},
      {wechat_answer(400, R"({"code":"ORDER_CLOSED","message":"closed"})"), CloseState::closed,
       "ORDER_CLOSED"},
      {wechat_answer(404, R"({"code":"ORDER_NOT_EXIST","message":"none"})"), CloseState::closed,
       "ORDER_NOT_EXIST"},
      {wechat_answer(403, R"({"code":"RULE_LIMIT","message":"later"})"), CloseState::refused,
       "RULE_LIMIT"},
  };
  for (const auto& row : rows) {
    const auto answer = wechat().close_answer(kClose, row.response, kNow);
    ASSERT_TRUE(answer.ok()) << row.response.body << ": " << rejection_detail(answer);
    EXPECT_EQ(answer.value().state, row.state) << row.response.body;
    EXPECT_EQ(answer.value().reason, row.reason);
  }
  for (const auto& response :
       {wechat_answer(204, "", Signed::none), wechat_answer(204, "", Signed::impostor),
        wechat_answer(200, "{}"), wechat_answer(400, "{}"), wechat_answer(400, "", Signed::none)}) {
    EXPECT_EQ(testing::reason_of(wechat().close_answer(kClose, response, kNow)),
              errc::rejected_answer)
        << response.status << " " << response.body;
  }
}

// --- alipay -----------------------------------------------------------------------------------

AlipayPayment alipay() {
  return AlipayPayment(AlipayQueryConfig{
      "2021000000000001", net::parse_url("https://openapi.alipay.test/gateway.do").value(),
      test_key("alipay-query-merchant").private_key, test_key("alipay").public_key});
}

net::Response alipay_answer(std::string_view member_name, const std::string& member,
                            const testing::TestKeyPair& key = test_key("alipay")) {
  const std::string sign =
      codec::base64_encode(codec::rsa_sha256_sign(key.private_key.get(), member));
  return net::Response{
      200, {}, "{\"" + std::string(member_name) + "\":" + member + R"(,"sign":")" + sign + "\"}"};
}

// The form as Alipay reads it, its RSA2 signature checked with the merchant's public key.
AlipayForm signed_form(const net::Request& request) {
  const auto form = parse_alipay_form(request.body).value();
  FormParams params;
  for (const auto& param : form.signed_params) {
    params.emplace_back(param.key, param.value);
  }
  params.emplace_back("sign_type", form.sign_type.value_or(""));
  const std::string content = alipay_request_sign_content(params);
  const std::array<std::string_view, 1> pieces{content};
  const auto signature = codec::base64_decode(form.sign, kAlipayMaxSignatureBytes);
  EXPECT_TRUE(signature &&
              codec::rsa_sha256_verify(test_key("alipay-query-merchant").public_key.get(), pieces,
                                       *signature));
  return form;
}

TEST(AlipayPayment, PrecreateIsASignedFormWithTheNotifyUrlAndTheDeadline) {
  const auto request = alipay().create_request(kCreate, kNow).value();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url.target, "/gateway.do");
  const auto form = signed_form(request);
  EXPECT_EQ(*form.find("method"), "alipay.trade.precreate");
  EXPECT_EQ(*form.find("notify_url"), kCreate.notify_url);
  const auto biz = json::parse(*form.find("biz_content"));
  EXPECT_EQ(biz, json({{"out_trade_no", "P-0001"},
                       {"total_amount", "50.00"},
                       {"subject", "2 seats, Hall A"},
                       {"time_expire", "2026-12-08 10:00:00"}}));
  const auto close = signed_form(alipay().close_request(kClose, kNow).value());
  EXPECT_EQ(*close.find("method"), "alipay.trade.close");
  EXPECT_EQ(json::parse(*close.find("biz_content")), json({{"out_trade_no", "P-0001"}}));
}

TEST(AlipayPayment, PrecreateAnswersAreCreatedRefusedOrRejected) {
  const std::string member = R"({"code":"10000","msg":"Success","out_trade_no":"P-0001",)"
                             R"("qr_code":"https://qr.alipay.com/bavh4wjlxf12tper3a"})";
  const auto created =
      alipay().create_answer(kCreate, alipay_answer(kAlipayPrecreateResponseMember, member), kNow);
  ASSERT_TRUE(created.ok()) << rejection_detail(created);
  EXPECT_TRUE(created.value().created);
  EXPECT_EQ(created.value().field, "qrCode");
  EXPECT_EQ(created.value().value, "https://qr.alipay.com/bavh4wjlxf12tper3a");
  const auto refused = alipay().create_answer(
      kCreate,
      alipay_answer(
          kAlipayPrecreateResponseMember,
          R"({"code":"40004","msg":"Business Failed","sub_code":"ACQ.TRADE_HAS_SUCCESS"})"),
      kNow);
  ASSERT_TRUE(refused.ok()) << rejection_detail(refused);
  EXPECT_FALSE(refused.value().created);
  EXPECT_EQ(refused.value().reason, "ACQ.TRADE_HAS_SUCCESS");
  const std::vector<std::pair<net::Response, std::string>> rejected = {
      {alipay_answer(kAlipayPrecreateResponseMember, member, impostor()),
       "signature does not verify"},
      {alipay_answer(kAlipayQueryResponseMember, member),
       "alipay_trade_precreate_response missing"},
      {alipay_answer(kAlipayPrecreateResponseMember,
                     R"({"code":"10000","out_trade_no":"P-9","qr_code":"https://qr"})"),
       "out_trade_no missing or another payment's"},
      {alipay_answer(kAlipayPrecreateResponseMember, R"({"code":"10000","out_trade_no":"P-0001"})"),
       "qr_code missing or not a pay value"},
      {net::Response{200, {}, R"({"alipay_trade_precreate_response":)" + member + "}"},
       "sign missing or not a string"},
  };
  for (const auto& [response, detail] : rejected) {
    const auto answer = alipay().create_answer(kCreate, response, kNow);
    EXPECT_EQ(rejection_detail(answer).rfind(detail, 0), 0U) << rejection_detail(answer);
  }
}

TEST(AlipayPayment, CloseAnswersAreClosedPaidRefusedOrRejected) {
  struct Row {
    std::string member;
    CloseState state;
    std::string reason;
  };
  const std::vector<Row> rows = {
      {R"({"code":"10000","msg":"Success","trade_no":"2013112111001004500000675971",)"
       R"("out_trade_no":"P-0001"})",
       CloseState::closed, ""},
      {R"({"code":"40004","msg":"Business Failed","sub_code":"ACQ.TRADE_NOT_EXIST"})",
       CloseState::closed, "ACQ.TRADE_NOT_EXIST"},
      {R"({"code":"40004","msg":"Business Failed","sub_code":"ACQ.TRADE_HAS_SUCCESS"})",
       CloseState::paid, "ACQ.TRADE_HAS_SUCCESS"},
      {R"({"code":"40004","msg":"Business Failed","sub_code":"ACQ.TRADE_STATUS_ERROR"})",
       CloseState::refused, "ACQ.TRADE_STATUS_ERROR"},
      {R"({"code":"20000","msg":"Service Currently Unavailable"})", CloseState::refused, "20000"},
  };
  for (const auto& row : rows) {
    const auto answer =
        alipay().close_answer(kClose, alipay_answer(kAlipayCloseResponseMember, row.member), kNow);
    ASSERT_TRUE(answer.ok()) << row.member << ": " << rejection_detail(answer);
    EXPECT_EQ(answer.value().state, row.state) << row.member;
    EXPECT_EQ(answer.value().reason, row.reason);
  }
  const std::string closed = R"({"code":"10000","msg":"Success","out_trade_no":"P-0001"})";
  EXPECT_EQ(rejection_detail(alipay().close_answer(
                kClose, alipay_answer(kAlipayCloseResponseMember, closed, impostor()), kNow)),
            "signature does not verify");
  EXPECT_EQ(rejection_detail(alipay().close_answer(
                kClose,
                alipay_answer(kAlipayCloseResponseMember,
                              R"({"code":"40004","sub_code":"ACQ.TRADE_NOT_EXIST",)"
                              R"("out_trade_no":"P-9"})"),
                kNow)),
            "out_trade_no is another payment's");
  EXPECT_EQ(rejection_detail(alipay_close_answer_from("[1]", kClose)),
            "alipay_trade_close_response is not a JSON object");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

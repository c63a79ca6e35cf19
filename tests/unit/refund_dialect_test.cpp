// Unit tests for the refund dialects (SPEC §12): each channel's signed refund request (with the
// stable refund number) and every mapping of its verified answer, refusals and rejections apart.
#include <gtest/gtest.h>

#include <array>
#include <variant>

#include <nlohmann/json.hpp>

#include "channels/alipay/alipay_channel.hpp"
#include "channels/alipay/alipay_refund.hpp"
#include "channels/gateway_signer.hpp"
#include "channels/hmac/hmac_refund.hpp"
#include "channels/wechat/wechat_refund.hpp"
#include "codec/crypto.hpp"
#include "codec/digest.hpp"
#include "support/fake_gateways.hpp"
#include "support/test_keys.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using testing::test_key;

constexpr std::int64_t kNow = 1'700'000'000'000;
const RefundTarget kTarget{"P-0001", "rfd_0123456789abcdef0123", 5000,
                           "paid after the order was cancelled"};
const std::string kSecret = "refund-unit-secret";

std::string detail_of(const Result<RefundAnswer>& result) {
  return result.ok() ? std::string() : result.detail();
}

RefundAnswer answer_of(const Result<RefundAnswer>& result) {
  const auto* answer = result.ok() ? &result.value() : nullptr;
  EXPECT_NE(answer, nullptr) << detail_of(result);
  return answer == nullptr ? RefundAnswer{} : *answer;
}

net::Url url(const std::string& text) {
  return net::parse_url(text).value();
}

TEST(RefundNumbers, OnlyWhatBothGatewaysAccept) {
  EXPECT_TRUE(valid_refund_no("rfd_0123456789abcdef0123"));
  EXPECT_TRUE(valid_refund_no(std::string(kRefundNoBytesMax, 'a')));
  EXPECT_FALSE(valid_refund_no(std::string(kRefundNoBytesMax + 1, 'a')));
  EXPECT_FALSE(valid_refund_no(""));
  EXPECT_FALSE(valid_refund_no("rfd 1"));
  EXPECT_FALSE(valid_refund_no("rfd:1"));
  EXPECT_EQ(bounded_reason("a\nb\xE4\xBD\xA0"), "a?b???");
  EXPECT_EQ(bounded_reason(std::string(200, 'x')).size(), kRefundReasonBytesMax);
}

// --- hmac -------------------------------------------------------------------------------------

HmacRefund hmac_refund() {
  return HmacRefund(HmacConfig{{kSecret, "older-secret"}, 300'000},
                    url("http://gateway.test:9000/base/"));
}

net::Response hmac_answer(const HmacRefundRequest& request, bool succeeded,
                          const std::string& secret = kSecret, std::int64_t at = kNow) {
  return net::Response{200, {}, hmac_refund_answer_body(secret, request, succeeded, "because", at)};
}

const HmacRefundRequest kHmacFields{kTarget.refund_no, kTarget.payment_no, 5000, kNow};

TEST(HmacRefund, TheRequestIsSignedLikeACallbackAndTheGatewayReadsIt) {
  const auto request = hmac_refund().refund_request(kTarget, kNow).value();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url.host, "gateway.test");
  EXPECT_EQ(request.url.target, "/base/api/gateway/refunds");
  const auto body = json::parse(request.body);
  EXPECT_EQ(body["refundNo"], kTarget.refund_no);
  EXPECT_EQ(body["paymentNo"], "P-0001");
  EXPECT_EQ(body["amountCents"], 5000);
  EXPECT_EQ(body["timestamp"], kNow);
  const std::array<std::string_view, 1> pieces{
      std::string_view("rfd_0123456789abcdef0123\nP-0001\n5000\n1700000000000")};
  EXPECT_EQ(body["sign"], codec::to_lower_hex(codec::hmac_sha256(kSecret, pieces)));
  const auto read = hmac_refund_read_request(request.body, {"other", kSecret}, kNow, 300'000);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read.value().refund_no, kTarget.refund_no);
  // The gateway refuses another secret, a stale request and a changed amount.
  EXPECT_EQ(hmac_refund_read_request(request.body, {"other"}, kNow, 300'000).detail(),
            "signature does not verify");
  EXPECT_EQ(hmac_refund_read_request(request.body, {kSecret}, kNow + 400'000, 300'000).detail(),
            "timestamp outside the accepted window");
  auto changed = body;
  changed["amountCents"] = 5001;
  EXPECT_EQ(hmac_refund_read_request(changed.dump(), {kSecret}, kNow, 300'000).detail(),
            "signature does not verify");
}

TEST(HmacRefund, VerifiedAnswersMapToSucceededOrRefused) {
  const auto dialect = hmac_refund();
  const auto ok = answer_of(dialect.refund_answer(kTarget, hmac_answer(kHmacFields, true), kNow));
  EXPECT_EQ(ok.state, RefundState::succeeded);
  EXPECT_EQ(ok.reason, "because");
  const auto no = answer_of(dialect.refund_answer(kTarget, hmac_answer(kHmacFields, false), kNow));
  EXPECT_EQ(no.state, RefundState::refused);
  // Signed by the older secret: still verifies (rotation).
  EXPECT_EQ(answer_of(dialect.refund_answer(kTarget, hmac_answer(kHmacFields, true, "older-secret"),
                                            kNow))
                .state,
            RefundState::succeeded);
}

TEST(HmacRefund, AnswersThatProveNothingAreRejections) {
  const auto dialect = hmac_refund();
  auto other_refund = kHmacFields;
  other_refund.refund_no = "rfd_other";
  auto other_amount = kHmacFields;
  other_amount.amount_cents = 5001;
  auto tampered = json::parse(hmac_answer(kHmacFields, false).body);
  tampered["status"] = "succeeded";
  const std::vector<std::pair<net::Response, std::string>> rows = {
      {hmac_answer(kHmacFields, true, "impostor"), "answer signature does not verify"},
      {net::Response{200, {}, tampered.dump()}, "answer signature does not verify"},
      {hmac_answer(kHmacFields, true, kSecret, kNow - 600'000),
       "answer timestamp outside the accepted window"},
      {hmac_answer(other_refund, true), "the answer names another refund or payment"},
      {hmac_answer(other_amount, true), "the answer's amountCents differs from the refund's"},
      {net::Response{500, {}, "oops"}, "unexpected HTTP status 500"},
      {net::Response{200, {}, "{not json"}, "answer is not a JSON object"},
  };
  for (const auto& [response, detail] : rows) {
    EXPECT_EQ(detail_of(dialect.refund_answer(kTarget, response, kNow)), detail) << response.body;
  }
}

// --- alipay -----------------------------------------------------------------------------------

const std::string kAppId = "2021000000000001";

TEST(AlipayRefund, TheRequestIsASignedTradeRefundWithTheStableRequestNumber) {
  const auto params = alipay_refund_params(kAppId, kTarget, kNow);
  const AlipayRefund dialect({kAppId, url("https://openapi.alipay.test/gateway.do"),
                              test_key("alipay-query-merchant").private_key,
                              test_key("alipay").public_key});
  const auto request = dialect.refund_request(kTarget, kNow).value();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url.target, "/gateway.do");
  const auto form = (parse_alipay_form(request.body)).value();
  EXPECT_EQ(*form.find("method"), "alipay.trade.refund");
  const auto biz = json::parse(*form.find("biz_content"));
  EXPECT_EQ(biz["out_trade_no"], "P-0001");
  EXPECT_EQ(biz["out_request_no"], kTarget.refund_no);
  EXPECT_EQ(biz["refund_amount"], "50.00");
  // The sign covers every param but sign, sorted, as Alipay checks it.
  const auto signature = codec::base64_decode(form.sign, kAlipayMaxSignatureBytes);
  ASSERT_TRUE(signature);
  const std::string content = alipay_request_sign_content(params);
  const std::array<std::string_view, 1> pieces{content};
  // The timestamp is the same (same now), so the content the fake would check is this one.
  EXPECT_TRUE(codec::rsa_sha256_verify(test_key("alipay-query-merchant").public_key.get(), pieces,
                                       *signature));
}

TEST(AlipayRefund, AnswerMapping) {
  const std::string success =
      R"({"code":"10000","msg":"Success","fund_change":"Y","out_trade_no":"P-0001",)"
      R"("refund_fee":"50.00","trade_no":"2026120122001400000000000001"})";
  const auto ok = answer_of(alipay_refund_answer_from(success, kTarget));
  EXPECT_EQ(ok.state, RefundState::succeeded);
  EXPECT_EQ(ok.reason, "fund_change Y");
  EXPECT_EQ(ok.gateway_refund_no, "2026120122001400000000000001");
  // A retry of a refund already made: no funds move, and it is still the refund's success.
  const std::string again =
      R"({"code":"10000","msg":"Success","fund_change":"N","out_trade_no":"P-0001",)"
      R"("refund_fee":"50.00"})";
  EXPECT_EQ(answer_of(alipay_refund_answer_from(again, kTarget)).state, RefundState::succeeded);
  const auto refused = answer_of(alipay_refund_answer_from(
      R"({"code":"40004","msg":"Business Failed","sub_code":"ACQ.SELLER_BALANCE_NOT_ENOUGH"})",
      kTarget));
  EXPECT_EQ(refused.state, RefundState::refused);
  EXPECT_EQ(refused.reason, "Alipay answered code 40004 sub_code ACQ.SELLER_BALANCE_NOT_ENOUGH");
  EXPECT_EQ(detail_of(alipay_refund_answer_from(
                R"({"code":"10000","out_trade_no":"P-9","refund_fee":"50.00"})", kTarget)),
            "out_trade_no missing or another payment's");
  EXPECT_EQ(detail_of(alipay_refund_answer_from(
                R"({"code":"10000","out_trade_no":"P-0001","refund_fee":"49.99"})", kTarget)),
            "refund_fee missing or not the payment's amount");
}

// --- wechat -----------------------------------------------------------------------------------

const std::string kMchid = "1900000001";
const std::string kMerchantSerial = "3775B6A45ACD588826D15E583A95F5DD";
const std::string kPlatformSerial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";

WechatRefund wechat_refund() {
  return WechatRefund(WechatQueryConfig{kMchid,
                                        url("https://api.mch.weixin.test"),
                                        test_key("wechat-query-merchant").private_key,
                                        kMerchantSerial,
                                        {{kPlatformSerial, test_key("wechat").public_key}}});
}

std::string wechat_answer(const std::string& status, std::int64_t refund = 5000,
                          const std::string& refund_no = kTarget.refund_no) {
  return json{{"refund_id", "50000000382019052709732678859"},
              {"out_refund_no", refund_no},
              {"out_trade_no", "P-0001"},
              {"status", status},
              {"amount", {{"total", 5000}, {"refund", refund}, {"currency", "CNY"}}}}
      .dump();
}

TEST(WechatRefund, TheRequestIsASignedPostWithTheStableRefundNumber) {
  const auto request = wechat_refund().refund_request(kTarget, kNow).value();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url.target, "/v3/refund/domestic/refunds");
  const auto body = json::parse(request.body);
  EXPECT_EQ(body["out_trade_no"], "P-0001");
  EXPECT_EQ(body["out_refund_no"], kTarget.refund_no);
  EXPECT_EQ(body["amount"]["refund"], 5000);
  EXPECT_EQ(body["amount"]["total"], 5000);
  EXPECT_EQ(body["amount"]["currency"], "CNY");
  std::string authorization;
  for (const auto& [name, value] : request.headers) {
    if (name == "Authorization") {
      authorization = value;
    }
  }
  const auto fields = testing::parse_wechat_authorization(authorization);
  ASSERT_TRUE(fields);
  EXPECT_EQ(fields->at("mchid"), kMchid);
  EXPECT_EQ(fields->at("serial_no"), kMerchantSerial);
  const std::string message = "POST\n/v3/refund/domestic/refunds\n" + fields->at("timestamp") +
                              "\n" + fields->at("nonce_str") + "\n" + request.body + "\n";
  const std::array<std::string_view, 1> pieces{message};
  const auto signature = codec::base64_decode(fields->at("signature"), 1024);
  ASSERT_TRUE(signature);
  EXPECT_TRUE(codec::rsa_sha256_verify(test_key("wechat-query-merchant").public_key.get(), pieces,
                                       *signature));
}

TEST(WechatRefund, AnswerMapping) {
  EXPECT_EQ(answer_of(wechat_refund_answer_from(200, wechat_answer("PROCESSING"), kTarget)).state,
            RefundState::succeeded);
  const auto done = answer_of(wechat_refund_answer_from(200, wechat_answer("SUCCESS"), kTarget));
  EXPECT_EQ(done.state, RefundState::succeeded);
  EXPECT_EQ(done.gateway_refund_no, "50000000382019052709732678859");
  EXPECT_EQ(answer_of(wechat_refund_answer_from(200, wechat_answer("ABNORMAL"), kTarget)).state,
            RefundState::refused);
  const auto refused = answer_of(wechat_refund_answer_from(
      403, R"({"code":"NOT_ENOUGH","message":"balance not enough"})", kTarget));
  EXPECT_EQ(refused.state, RefundState::refused);
  EXPECT_EQ(refused.reason, "WeChat Pay answered 403 code NOT_ENOUGH");
  EXPECT_EQ(detail_of(wechat_refund_answer_from(200, wechat_answer("SUCCESS", 4999), kTarget)),
            "amount.refund missing or not the payment's amount");
  EXPECT_EQ(
      detail_of(wechat_refund_answer_from(200, wechat_answer("SUCCESS", 5000, "rfd_x"), kTarget)),
      "out_refund_no missing or another refund's");
  EXPECT_EQ(detail_of(wechat_refund_answer_from(200, wechat_answer("WHATEVER"), kTarget)),
            "status missing or not one WeChat Pay documents");
}

TEST(WechatRefund, AnUnsignedOrWronglySignedAnswerIsARejection) {
  const auto dialect = wechat_refund();
  const std::string body = wechat_answer("SUCCESS");
  const auto signed_headers = wechat_sign(body, kPlatformSerial, kNow / 1000,
                                          test_key("gateway-impostor").private_key.get());
  const net::Response forged{200,
                             {{"wechatpay-timestamp", signed_headers.timestamp},
                              {"wechatpay-nonce", signed_headers.nonce},
                              {"wechatpay-signature", signed_headers.signature},
                              {"wechatpay-serial", signed_headers.serial}},
                             body};
  EXPECT_EQ(detail_of(dialect.refund_answer(kTarget, forged, kNow)),
            "answer signature: signature does not verify");
  const auto genuine =
      wechat_sign(body, kPlatformSerial, kNow / 1000, test_key("wechat").private_key.get());
  const net::Response honest{200,
                             {{"wechatpay-timestamp", genuine.timestamp},
                              {"wechatpay-nonce", genuine.nonce},
                              {"wechatpay-signature", genuine.signature},
                              {"wechatpay-serial", genuine.serial}},
                             body};
  EXPECT_EQ(answer_of(dialect.refund_answer(kTarget, honest, kNow)).state, RefundState::succeeded);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

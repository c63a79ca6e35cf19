// Functional tests: signed alipay and wechat notifies end to end over HTTP (SPEC §5–§6), the
// engine started with both dialects configured from key files generated at test time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "channels/gateway_signer.hpp"
#include "http/auth.hpp"
#include "support/engine_fixture.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"
#include "support/test_keys.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

const std::string kAppId = "2021000000000001";
const std::string kMchid = "1900000001";
const std::string kApiV3Key = "functional-apiv3-key-32-bytes-ok";
const std::string kSerial = "3775B6A45ACD588826D15E583A95F5DD00000001";
const std::string kWechatAck = "{\"code\":\"SUCCESS\",\"message\":\"\xE6\x88\x90\xE5\x8A\x9F\"}";

EnvOverrides gateway_env() {
  std::string keys = kSerial;
  keys += "=";
  keys += test_key("wechat").public_pem_path;
  return EnvOverrides{{"SEATFLOW_ALIPAY_APP_ID", kAppId},
                      {"SEATFLOW_ALIPAY_PUBLIC_KEY", test_key("alipay").public_pem_path},
                      {"SEATFLOW_WECHAT_MCHID", kMchid},
                      {"SEATFLOW_WECHAT_APIV3_KEY", kApiV3Key},
                      {"SEATFLOW_WECHAT_PLATFORM_KEYS", keys}};
}

std::string alipay_body(const std::string& notify_id, const std::string& payment,
                        const std::string& amount, const std::string& trade_no,
                        const std::string& trade_status = "TRADE_SUCCESS") {
  channels::AlipayNotice notice;
  notice.trade_status = trade_status;
  notice.app_id = kAppId;
  notice.notify_id = notify_id;
  notice.out_trade_no = payment;
  notice.trade_no = trade_no;
  notice.total_amount = amount;
  return channels::alipay_signed_form(
      channels::alipay_notice_params(notice, domain::unix_time_ms()),
      test_key("alipay").private_key.get());
}

Response post_alipay(const TestEngine& engine, const std::string& body) {
  return engine.connect()->request("POST", "/api/payment/notify/alipay", body,
                                   {{"Content-Type", "application/x-www-form-urlencoded"}});
}

struct WechatRequest {
  std::string body;
  HeaderList headers;
};

WechatRequest wechat_request(const std::string& id, const std::string& payment,
                             std::int64_t amount_fen, const std::string& transaction_id) {
  channels::WechatTransaction transaction;
  transaction.mchid = kMchid;
  transaction.out_trade_no = payment;
  transaction.transaction_id = transaction_id;
  transaction.amount_total_fen = amount_fen;
  const auto now = domain::unix_time_ms();
  auto body = channels::wechat_notification_body(
      id, channels::wechat_transaction_json(transaction, now), kApiV3Key, "SUCCESS", now);
  const auto signed_headers =
      channels::wechat_sign(body, kSerial, now / 1000, test_key("wechat").private_key.get());
  // Header names in WeChat's own casing: the engine must match them case-insensitively.
  HeaderList headers = {{"Content-Type", "application/json"},
                        {"Wechatpay-Timestamp", signed_headers.timestamp},
                        {"Wechatpay-Nonce", signed_headers.nonce},
                        {"Wechatpay-Signature", signed_headers.signature},
                        {"Wechatpay-Serial", signed_headers.serial}};
  return WechatRequest{std::move(body), std::move(headers)};
}

Response post_wechat(const TestEngine& engine, const WechatRequest& request) {
  return engine.connect()->request("POST", "/api/payment/notify/wechat", request.body,
                                   request.headers);
}

TEST(GatewayChannels, AlipaySuccessPaysAndAcksWithSuccess) {
  Stores stores;
  const Pending p(stores, "alipay");
  TestEngine engine(gateway_env());
  ASSERT_TRUE(engine.healthy());
  const auto log = engine.await_log("channels=hmac,alipay,wechat");
  EXPECT_NE(log.find("channels=hmac,alipay,wechat"), std::string::npos) << log;
  const auto notify_id = stores.id("notify");
  const auto trade_no = stores.id("2024trade");
  const auto body = alipay_body(notify_id, p.payment, "50.00", trade_no);

  const auto first = post_alipay(engine, body);
  EXPECT_EQ(first.status, 200) << first.body << first.error;
  EXPECT_EQ(first.body, "success");
  expect_paid(stores, p, trade_no);

  const auto again = post_alipay(engine, body);
  EXPECT_EQ(again.status, 200) << again.body << again.error;
  EXPECT_EQ(again.body, "success");
  // duplicate_count itself is the hmac suite's subject (callback_flow_test.cpp).
  ASSERT_TRUE(stores.log_row(notify_id).has_value());
  EXPECT_EQ(stores.log_rows_for_payment(p.payment), 1);
  EXPECT_EQ(engine.callbacks("applied", "alipay"), 1.0);

  // Alipay's later TRADE_FINISHED (a new notify_id, same trade) is acknowledged and moves nothing.
  const auto finished_id = stores.id("notify-finished");
  const auto finished =
      post_alipay(engine, alipay_body(finished_id, p.payment, "50.00", trade_no, "TRADE_FINISHED"));
  EXPECT_EQ(finished.status, 200) << finished.body << finished.error;
  EXPECT_EQ(finished.body, "success");
  expect_paid(stores, p, trade_no);
}

TEST(GatewayChannels, WechatSuccessPaysAndAcksWithJson) {
  Stores stores;
  const Pending p(stores, "wechat");
  TestEngine engine(gateway_env());
  ASSERT_TRUE(engine.healthy());
  const auto id = stores.id("EV");
  const auto transaction_id = stores.id("4200");
  const auto request = wechat_request(id, p.payment, 5000, transaction_id);

  const auto response = post_wechat(engine, request);
  EXPECT_EQ(response.status, 200) << response.body << response.error;
  EXPECT_EQ(response.body, kWechatAck);
  EXPECT_EQ(response.header("content-type"), "application/json");
  expect_paid(stores, p, transaction_id);
  ASSERT_TRUE(stores.log_row(id).has_value());
  EXPECT_EQ(engine.callbacks("applied", "wechat"), 1.0);
}

TEST(GatewayChannels, AmountMismatchIs400AndChangesNothing) {
  Stores stores;
  const Pending alipay(stores, "alipay");
  const Pending wechat(stores, "wechat");
  TestEngine engine(gateway_env());
  ASSERT_TRUE(engine.healthy());

  const auto notify_id = stores.id("notify");
  const auto alipay_response =
      post_alipay(engine, alipay_body(notify_id, alipay.payment, "49.99", stores.id("T")));
  EXPECT_EQ(alipay_response.status, 400) << alipay_response.body << alipay_response.error;
  expect_untouched(stores, alipay, notify_id);

  const auto id = stores.id("EV");
  const auto wechat_response =
      post_wechat(engine, wechat_request(id, wechat.payment, 5001, stores.id("4200")));
  EXPECT_EQ(wechat_response.status, 400) << wechat_response.body << wechat_response.error;
  EXPECT_EQ(nlohmann::json::parse(wechat_response.body, nullptr, false).value("code", ""), "FAIL")
      << wechat_response.body;
  expect_untouched(stores, wechat, id);
}

TEST(GatewayChannels, ForgedNotifiesAre401AndLeaveNothing) {
  Stores stores;
  const Pending alipay(stores, "alipay");
  const Pending wechat(stores, "wechat");
  TestEngine engine(gateway_env());
  ASSERT_TRUE(engine.healthy());

  const auto notify_id = stores.id("notify");
  auto body = alipay_body(notify_id, alipay.payment, "50.00", stores.id("T"));
  body.replace(body.find("total_amount=50.00"), 18, "total_amount=00.01");
  EXPECT_EQ(post_alipay(engine, body).status, 401);
  expect_untouched(stores, alipay, notify_id);

  const auto id = stores.id("EV");
  auto request = wechat_request(id, wechat.payment, 5000, stores.id("4200"));
  request.headers[4].second = "WECHATPAY/SIGNTEST/" + request.headers[4].second;
  EXPECT_EQ(post_wechat(engine, request).status, 401);
  expect_untouched(stores, wechat, id);
  EXPECT_EQ(engine.callbacks("rejected_signature", "wechat"), 1.0);
}

TEST(GatewayChannels, ChannelWithoutKeysIs404) {
  Stores stores;
  const Pending p(stores, "alipay");
  TestEngine engine;  // no SEATFLOW_ALIPAY_* / SEATFLOW_WECHAT_*: both dialects disabled
  ASSERT_TRUE(engine.healthy());
  const auto notify_id = stores.id("notify");
  EXPECT_EQ(post_alipay(engine, alipay_body(notify_id, p.payment, "50.00", stores.id("T"))).status,
            404);
  EXPECT_EQ(
      post_wechat(engine, wechat_request(stores.id("EV"), p.payment, 5000, stores.id("42"))).status,
      404);
  expect_untouched(stores, p, notify_id);
}

TEST(GatewayChannels, BadKeyFileStopsStartUpWithOneLine) {
  auto env = engine_env(free_port());
  for (const auto& [name, value] : gateway_env()) {
    env[name] = value;
  }
  env["SEATFLOW_ALIPAY_PUBLIC_KEY"] = "/nonexistent/alipay_public.pem";
  const auto result = run_to_exit({"serve"}, env, std::chrono::seconds(10));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("configuration error: SEATFLOW_ALIPAY_PUBLIC_KEY"),
            std::string::npos)
      << result.output;
}

TEST(GatewayChannels, SignCommandOutputIsAcceptedByTheEngine) {
  Stores stores;
  const Pending p(stores, "alipay");
  TestEngine engine(gateway_env());
  ASSERT_TRUE(engine.healthy());
  auto env = gateway_env();
  const auto signed_output = run_to_exit(
      {"sign", "--channel", "alipay", "--private-key", test_key("alipay").private_pem_path,
       "--payment-no", p.payment, "--amount", "50.00", "--body-only"},
      env);
  ASSERT_EQ(signed_output.exit_code, 0) << signed_output.output;
  auto body = signed_output.output;
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) {
    body.pop_back();
  }
  const auto response = post_alipay(engine, body);
  EXPECT_EQ(response.status, 200) << response.body << response.error;
  EXPECT_EQ(stores.payment_status(p.payment), 1);
}

// The value of `name` in an application/x-www-form-urlencoded body, still encoded ("" if absent).
std::string form_value(const std::string& body, const std::string& name) {
  const auto start = body.find(name + "=");
  if (start == std::string::npos || (start != 0 && body[start - 1] != '&')) {
    return {};
  }
  const auto value_start = start + name.size() + 1;
  return body.substr(value_start, body.find('&', value_start) - value_start);
}

// Secret hygiene with every secret configured at once: both hmac secrets, the API token (which is
// also the JWT key), the WeChat APIv3 key, alipay and wechat keys. Good and bad traffic on every
// channel and on the API; neither a secret nor a full (or a long prefix of a) signature or token
// may reach stdout/stderr, even at debug level.
TEST(Secrets, NoConfiguredSecretTokenOrSignatureIsEverLogged) {
  Stores stores;
  const Pending alipay(stores, "alipay");
  const Pending wechat(stores, "wechat");
  const auto hmac_payment = stores.id("pay-hmac");
  stores.create_pending(hmac_payment, stores.id("ord-hmac"), stores.id("show-hmac"), {"H1"});
  const std::string api_token = "functional-secret-scan-api-token-9d4e";
  const std::string rotated = "functional-secret-scan-rotated-5a17";
  const std::string jwt_key = "functional-secret-scan-jwt-key-2c8b";
  auto env = gateway_env();
  env["SEATFLOW_LOG_LEVEL"] = "debug";
  env["SEATFLOW_API_TOKEN"] = api_token;
  env["SEATFLOW_API_JWT_KEY"] = jwt_key;
  env["SEATFLOW_CALLBACK_SECRETS"] = std::string(kTestSecret) + "," + rotated;
  TestEngine engine(env);
  ASSERT_TRUE(engine.healthy()) << engine.log();

  // Signatures and credentials sent; each must stay out of the log.
  std::vector<std::string> sent;
  // hmac: good (both secrets), a wrong secret, a tampered signature, a stale one.
  const auto good_hmac = signed_body(stores.id("cb-hmac"), hmac_payment, 1);
  const auto rotated_hmac =
      signed_body(stores.id("cb-hmac-r"), hmac_payment, 1, domain::unix_time_ms(), rotated);
  const auto wrong_hmac = signed_body(stores.id("cb-hmac-w"), hmac_payment, 1,
                                      domain::unix_time_ms(), "an-unknown-secret-0000");
  const auto stale_hmac =
      signed_body(stores.id("cb-hmac-s"), hmac_payment, 1, domain::unix_time_ms() - 600'000);
  auto tampered_hmac = good_hmac;
  const auto sign_at = tampered_hmac.find(sign_of(good_hmac));
  tampered_hmac[sign_at] = tampered_hmac[sign_at] == 'a' ? 'b' : 'a';
  std::vector<int> statuses;
  for (const auto& body : {good_hmac, rotated_hmac, wrong_hmac, stale_hmac, tampered_hmac}) {
    statuses.push_back(engine.notify(body).status);
    sent.push_back(sign_of(body));
  }
  EXPECT_EQ(statuses, (std::vector<int>{200, 200, 401, 401, 401}));

  // alipay: good and forged.
  const auto alipay_good =
      alipay_body(stores.id("notify"), alipay.payment, "50.00", stores.id("T"));
  auto alipay_forged = alipay_body(stores.id("notify-f"), alipay.payment, "50.00", stores.id("T"));
  alipay_forged.replace(alipay_forged.find("total_amount=50.00"), 18, "total_amount=00.01");
  EXPECT_EQ(post_alipay(engine, alipay_forged).status, 401);
  EXPECT_EQ(post_alipay(engine, alipay_good).status, 200);
  sent.push_back(form_value(alipay_good, "sign"));
  sent.push_back(form_value(alipay_forged, "sign"));

  // wechat: good and forged.
  const auto wechat_good = wechat_request(stores.id("EV"), wechat.payment, 5000, stores.id("42"));
  auto wechat_forged = wechat_request(stores.id("EV-f"), wechat.payment, 5000, stores.id("42f"));
  wechat_forged.headers[3].second = "AAAA" + wechat_forged.headers[3].second.substr(4);
  EXPECT_EQ(post_wechat(engine, wechat_forged).status, 401);
  EXPECT_EQ(post_wechat(engine, wechat_good).status, 200);
  sent.push_back(wechat_good.headers[3].second);
  sent.push_back(wechat_forged.headers[3].second);

  // The API: the raw token, a good JWT, a JWT under another key, a wrong token.
  const auto claims =
      R"({"sub":"ops","exp":)" + std::to_string(domain::unix_time_ms() / 1000 + 300) + "}";
  const auto jwt = http::sign_jwt_hs256(jwt_key, claims);
  const auto foreign_jwt = http::sign_jwt_hs256("another-api-secret-0001", claims);
  const auto target = "/api/payments/" + hmac_payment;
  EXPECT_EQ(engine.api("GET", target, api_token).status, 200);
  EXPECT_EQ(engine.api("GET", target, jwt).status, 200);
  EXPECT_EQ(engine.api("GET", target, foreign_jwt).status, 401);
  EXPECT_EQ(engine.api("GET", target, api_token + "x").status, 401);
  EXPECT_EQ(engine.api("GET", target, "").status, 401);
  sent.push_back(jwt.substr(jwt.rfind('.') + 1));
  sent.push_back(foreign_jwt.substr(foreign_jwt.rfind('.') + 1));

  ASSERT_EQ(engine.process().stop(), 0);
  const auto log = engine.log();
  EXPECT_NE(log.find("serving"), std::string::npos) << "the log was not captured:\n" << log;
  for (const auto& secret : {std::string(kTestSecret), rotated, api_token, jwt_key, kApiV3Key}) {
    EXPECT_EQ(log.find(secret), std::string::npos) << "secret " << secret << " logged:\n" << log;
    // Not even a long prefix of it.
    EXPECT_EQ(log.find(secret.substr(0, 12)), std::string::npos) << secret << ":\n" << log;
  }
  for (const auto& signature : sent) {
    ASSERT_GE(signature.size(), 32U) << "a signature the test sent is missing";
    EXPECT_EQ(log.find(signature), std::string::npos) << "signature " << signature << " logged";
    EXPECT_EQ(log.find(signature.substr(0, 16)), std::string::npos)
        << "a prefix of " << signature << " logged:\n"
        << log;
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

// Unit tests for the `wechat` channel (SPEC §5): header signature, window, probes, AES-GCM
// resource.
#include "channels/wechat/wechat_channel.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "channels/gateway_signer.hpp"
#include "codec/digest.hpp"
#include "codec/text.hpp"
#include "http/status.hpp"
#include "support/rejections.hpp"
#include "support/test_keys.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using testing::test_key;

constexpr std::int64_t kNow = 1'700'000'000'000;
constexpr std::int64_t kNowSeconds = kNow / 1000;
const std::string kMchid = "1900000001";
const std::string kApiV3Key = "0123456789abcdef0123456789ABCDEF";  // 32 bytes, test only
const std::string kSerial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";
const std::string kSerial2 = "7132D72A03E93CDDF8C03BBD1F37EEDF3F6E4A6B";

WechatTransaction transaction(std::string trade_state = "SUCCESS") {
  WechatTransaction t;
  t.mchid = kMchid;
  t.out_trade_no = "P-0001";
  t.transaction_id = "4200000000202401010000000001";
  t.trade_state = std::move(trade_state);
  t.amount_total_fen = 5000;
  return t;
}

std::string body_for(const WechatTransaction& t, const std::string& id = "EV-0001",
                     const std::string& apiv3_key = kApiV3Key) {
  return wechat_notification_body(id, wechat_transaction_json(t, kNow), apiv3_key, t.trade_state,
                                  kNow);
}

struct Request {
  std::string body;
  codec::Headers headers;
};

Request signed_request(std::string body, const std::string& serial = kSerial,
                       const std::string& key = "wechat", std::int64_t timestamp_s = kNowSeconds) {
  const auto signed_headers =
      wechat_sign(body, serial, timestamp_s, test_key(key).private_key.get());
  codec::Headers headers{{"content-type", "application/json"},
                         {std::string(kWechatTimestampHeader), signed_headers.timestamp},
                         {std::string(kWechatNonceHeader), signed_headers.nonce},
                         {std::string(kWechatSignatureHeader), signed_headers.signature},
                         {std::string(kWechatSerialHeader), signed_headers.serial}};
  return Request{std::move(body), std::move(headers)};
}

WechatChannel make_channel() {
  return WechatChannel(WechatRules{kMchid, kApiV3Key},
                       WechatPlatformKeys{{kSerial, test_key("wechat").public_key},
                                          {kSerial2, test_key("wechat-next").public_key}});
}

Result<domain::VerifiedCallback> verify(const WechatChannel& channel, const Request& request,
                                        std::int64_t now_ms = kNow) {
  return channel.verify(InboundRequest{request.body, &request.headers, now_ms});
}

std::optional<RejectReason> reason_of(const Result<domain::VerifiedCallback>& result) {
  return result.ok() ? std::nullopt : std::optional(errc_of(result.error()));
}

std::string detail_of(const Result<domain::VerifiedCallback>& result) {
  return result.ok() ? std::string("verified") : result.detail();
}

// A body whose resource is replaced by `resource` (then signed by the caller).
std::string body_with_resource(const json& resource, const std::string& id = "EV-0001") {
  return json{{"id", id}, {"event_type", "TRANSACTION.SUCCESS"}, {"resource", resource}}.dump();
}

json sealed_resource(const std::string& plaintext, const std::string& key = kApiV3Key) {
  const std::string nonce = "abcdefghijkl";
  return json{{"algorithm", "AEAD_AES_256_GCM"},
              {"ciphertext",
               codec::base64_encode(codec::aes256gcm_seal(key, nonce, "transaction", plaintext))},
              {"nonce", nonce},
              {"associated_data", "transaction"}};
}

// ---- Accepted callbacks --------------------------------------------------------------------

TEST(WechatChannel, SignedSuccessCarriesTheFields) {
  const auto result = verify(make_channel(), signed_request(body_for(transaction())));
  ASSERT_TRUE(result.ok()) << detail_of(result);
  const auto& callback = result.value();
  EXPECT_EQ(callback.callback_id, "EV-0001");
  EXPECT_EQ(callback.payment_no, "P-0001");
  EXPECT_EQ(callback.channel_trade_no, "4200000000202401010000000001");
  EXPECT_EQ(callback.channel, domain::Channel::wechat);
  EXPECT_EQ(callback.kind, domain::CallbackKind::success);
  EXPECT_EQ(callback.amount_cents, 5000);
  EXPECT_EQ(callback.payload_sha256, codec::business_digest(callback));
}

TEST(WechatChannel, TradeStateMapsToKinds) {
  const auto channel = make_channel();
  const std::vector<std::pair<std::string, domain::CallbackKind>> cases = {
      {"SUCCESS", domain::CallbackKind::success}, {"PAYERROR", domain::CallbackKind::failure},
      {"CLOSED", domain::CallbackKind::failure},  {"REVOKED", domain::CallbackKind::failure},
      {"NOTPAY", domain::CallbackKind::other},    {"USERPAYING", domain::CallbackKind::other},
      {"REFUND", domain::CallbackKind::other},
  };
  for (const auto& [state, kind] : cases) {
    const auto result = verify(channel, signed_request(body_for(transaction(state))));
    ASSERT_TRUE(result.ok()) << state;
    EXPECT_EQ(result.value().kind, kind) << state;
  }
}

TEST(WechatChannel, NotPaidWithoutTransactionIdOrAmountIsOther) {
  auto t = transaction("NOTPAY");
  t.transaction_id.clear();
  t.amount_total_fen.reset();
  const auto result = verify(make_channel(), signed_request(body_for(t)));
  ASSERT_TRUE(result.ok()) << detail_of(result);
  EXPECT_EQ(result.value().kind, domain::CallbackKind::other);
  EXPECT_FALSE(result.value().amount_cents.has_value());
}

TEST(WechatChannel, RefundNotificationIsAcknowledgedAsOther) {
  // A REFUND.SUCCESS resource carries refund_status instead of trade_state.
  const json refund = {{"mchid", kMchid},
                       {"out_trade_no", "P-0001"},
                       {"transaction_id", "4200000000202401010000000001"},
                       {"out_refund_no", "R-0001"},
                       {"refund_id", "50000000382019052709732678859"},
                       {"refund_status", "SUCCESS"},
                       {"amount", {{"total", 5000}, {"refund", 5000}}}};
  const auto result =
      verify(make_channel(), signed_request(body_with_resource(sealed_resource(refund.dump()))));
  ASSERT_TRUE(result.ok()) << detail_of(result);
  const auto& callback = result.value();
  EXPECT_EQ(callback.kind, domain::CallbackKind::other);
  EXPECT_EQ(callback.payment_no, "P-0001");
  // Without either state it is still malformed.
  auto neither = refund;
  neither.erase("refund_status");
  EXPECT_EQ(reason_of(verify(make_channel(),
                             signed_request(body_with_resource(sealed_resource(neither.dump()))))),
            RejectReason::unusable);
}

TEST(WechatChannel, SameRequestVerifiesTwiceIdentically) {
  const auto channel = make_channel();
  const auto request = signed_request(body_for(transaction()));
  const auto first = verify(channel, request);
  const auto second = verify(channel, request);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first.value().payload_sha256, second.value().payload_sha256);
  EXPECT_EQ(first.value().callback_id, second.value().callback_id);
}

TEST(WechatChannel, EveryConfiguredSerialVerifiesWithItsOwnKey) {
  const auto channel = make_channel();
  const auto body = body_for(transaction());
  EXPECT_EQ(reason_of(verify(channel, signed_request(body, kSerial, "wechat"))), std::nullopt);
  EXPECT_EQ(reason_of(verify(channel, signed_request(body, kSerial2, "wechat-next"))),
            std::nullopt);
  // The right key under the other key's serial does not verify.
  EXPECT_EQ(reason_of(verify(channel, signed_request(body, kSerial2, "wechat"))),
            RejectReason::bad_signature);
}

TEST(WechatChannel, WindowIsPlusMinusThreeHundredSeconds) {
  const auto channel = make_channel();
  const auto body = body_for(transaction());
  for (const std::int64_t offset : {-300, 0, 300}) {
    EXPECT_EQ(
        reason_of(verify(channel, signed_request(body, kSerial, "wechat", kNowSeconds + offset))),
        std::nullopt)
        << offset;
  }
  for (const std::int64_t offset : {-301, 301, -86'400}) {
    EXPECT_EQ(
        reason_of(verify(channel, signed_request(body, kSerial, "wechat", kNowSeconds + offset))),
        RejectReason::stale)
        << offset;
  }
}

// SPEC §14: the RSA signature first, the window second: an old message under a tampered body is
// a forgery, an authentic one is stale with the skew seen.
TEST(WechatChannel, AnOldForgeryIsBadSignatureAndStaleCarriesTheSkew) {
  const auto channel = make_channel();
  auto old = signed_request(body_for(transaction()), kSerial, "wechat", kNowSeconds - 600);
  const auto stale = verify(channel, old);
  EXPECT_EQ(testing::reason_of(stale), RejectReason::stale);
  EXPECT_EQ(testing::skew_ms_of(stale), 600'000);
  const auto at = old.body.find("EV-0001");
  ASSERT_NE(at, std::string::npos);
  old.body[at + 6] = '2';
  EXPECT_EQ(reason_of(verify(channel, old)), RejectReason::bad_signature);
}

// ---- Signature rejections (401) ------------------------------------------------------------

TEST(WechatChannel, TamperedBodyByteIsBadSignature) {
  auto request = signed_request(body_for(transaction()));
  const auto at = request.body.find("EV-0001");
  ASSERT_NE(at, std::string::npos);
  request.body[at + 6] = '2';
  EXPECT_EQ(reason_of(verify(make_channel(), request)), RejectReason::bad_signature);
}

TEST(WechatChannel, TamperedHeadersAreBadSignature) {
  const auto channel = make_channel();
  auto nonce = signed_request(body_for(transaction()));
  nonce.headers[std::string(kWechatNonceHeader)] += "x";
  EXPECT_EQ(reason_of(verify(channel, nonce)), RejectReason::bad_signature);
  auto timestamp = signed_request(body_for(transaction()));
  timestamp.headers[std::string(kWechatTimestampHeader)] = std::to_string(kNowSeconds + 1);
  EXPECT_EQ(reason_of(verify(channel, timestamp)), RejectReason::bad_signature);
  auto not_base64 = signed_request(body_for(transaction()));
  not_base64.headers[std::string(kWechatSignatureHeader)] = "***";
  EXPECT_EQ(reason_of(verify(channel, not_base64)), RejectReason::bad_signature);
}

TEST(WechatChannel, WrongKeyAndUnknownSerialAreBadSignature) {
  const auto channel = make_channel();
  const auto body = body_for(transaction());
  EXPECT_EQ(reason_of(verify(channel, signed_request(body, kSerial, "someone-else"))),
            RejectReason::bad_signature);
  const auto unknown = verify(channel, signed_request(body, "UNKNOWN-SERIAL", "wechat"));
  EXPECT_EQ(reason_of(unknown), RejectReason::bad_signature);
  EXPECT_EQ(detail_of(unknown).find("UNKNOWN-SERIAL"), std::string::npos);
}

TEST(WechatChannel, ProbeSignatureIsRejected) {
  auto request = signed_request(body_for(transaction()));
  request.headers[std::string(kWechatSignatureHeader)] =
      std::string(kWechatProbePrefix) + request.headers[std::string(kWechatSignatureHeader)];
  const auto result = verify(make_channel(), request);
  EXPECT_EQ(reason_of(result), RejectReason::bad_signature);
  EXPECT_NE(detail_of(result).find("probe"), std::string::npos);
}

TEST(WechatChannel, MissingOrEmptySignatureHeadersAreBadSignature) {
  const auto channel = make_channel();
  for (const auto name :
       {kWechatTimestampHeader, kWechatNonceHeader, kWechatSignatureHeader, kWechatSerialHeader}) {
    auto missing = signed_request(body_for(transaction()));
    missing.headers.erase(std::string(name));
    EXPECT_EQ(reason_of(verify(channel, missing)), RejectReason::bad_signature) << name;
    auto empty = signed_request(body_for(transaction()));
    empty.headers[std::string(name)] = "";
    EXPECT_EQ(reason_of(verify(channel, empty)), RejectReason::bad_signature) << name;
    auto oversized = signed_request(body_for(transaction()));
    oversized.headers[std::string(name)] = std::string(kWechatMaxHeaderBytes + 1, 'A');
    EXPECT_NE(reason_of(verify(channel, oversized)), std::nullopt) << name;
  }
  const std::string body = body_for(transaction());
  EXPECT_EQ(reason_of(channel.verify(InboundRequest{body, nullptr, kNow})),
            RejectReason::bad_signature);
}

TEST(WechatChannel, NonNumericTimestampIsRejected) {
  auto request = signed_request(body_for(transaction()));
  for (const std::string stamp : {"17e8", "-1700000000", " 1700000000", "1700000000000000"}) {
    request.headers[std::string(kWechatTimestampHeader)] = stamp;
    EXPECT_EQ(http::http_status(*reason_of(verify(make_channel(), request))), 401) << stamp;
  }
}

// ---- Content rejections after a valid signature (400) ---------------------------------------

TEST(WechatChannel, UndecryptableResourceIsMalformed) {
  const auto channel = make_channel();
  const std::string plain = wechat_transaction_json(transaction(), kNow);
  auto garbled = sealed_resource(plain);
  auto ciphertext = *codec::base64_decode(garbled["ciphertext"].get<std::string>(), 1 << 20);
  ciphertext[3] = static_cast<char>(ciphertext[3] ^ 0x01);
  garbled["ciphertext"] = codec::base64_encode(ciphertext);
  auto truncated = sealed_resource(plain);
  truncated["ciphertext"] = codec::base64_encode(ciphertext.substr(0, 10));
  auto not_base64 = sealed_resource(plain);
  not_base64["ciphertext"] = "%%%";
  auto wrong_aad = sealed_resource(plain);
  wrong_aad["associated_data"] = "certificate";
  const auto wrong_key = sealed_resource(plain, "ffffffffffffffffffffffffffffffff");
  for (const auto& resource : {garbled, truncated, not_base64, wrong_aad, wrong_key}) {
    const auto result = verify(channel, signed_request(body_with_resource(resource)));
    EXPECT_EQ(reason_of(result), RejectReason::unusable) << resource.dump();
  }
  // And the untouched resource verifies, so the cases above fail for the reason intended.
  EXPECT_EQ(reason_of(verify(channel, signed_request(body_with_resource(sealed_resource(plain))))),
            std::nullopt);
}

TEST(WechatChannel, BadResourceShapeIsMalformed) {
  const auto channel = make_channel();
  const std::string plain = wechat_transaction_json(transaction(), kNow);
  auto algorithm = sealed_resource(plain);
  algorithm["algorithm"] = "AEAD_AES_128_GCM";
  auto no_nonce = sealed_resource(plain);
  no_nonce.erase("nonce");
  auto long_nonce = sealed_resource(plain);
  long_nonce["nonce"] = std::string(100, 'n');
  const std::vector<std::string> bodies = {
      "not json",
      "[]",
      body_with_resource(algorithm),
      body_with_resource(no_nonce),
      body_with_resource(long_nonce),
      body_with_resource("a string"),
      body_with_resource(sealed_resource(plain), std::string(codec::kMaxIdBytes + 1, 'i')),
      body_with_resource(sealed_resource(plain), ""),
      json{{"resource", sealed_resource(plain)}}.dump(),
  };
  for (const auto& body : bodies) {
    EXPECT_EQ(reason_of(verify(channel, signed_request(body))), RejectReason::unusable)
        << body.substr(0, 80);
  }
}

TEST(WechatChannel, MchidMismatchIsMalformed) {
  auto t = transaction();
  t.mchid = "1999999999";
  const auto result = verify(make_channel(), signed_request(body_for(t)));
  EXPECT_EQ(reason_of(result), RejectReason::unusable);
  EXPECT_NE(detail_of(result).find("mchid"), std::string::npos);
}

TEST(WechatChannel, BadTransactionFieldsAreMalformed) {
  const auto channel = make_channel();
  auto base = json::parse(wechat_transaction_json(transaction(), kNow));
  std::vector<json> cases;
  for (const json& total : {json(-1), json(50.0), json("5000"), json(nullptr)}) {
    auto doc = base;
    doc["amount"]["total"] = total;
    cases.push_back(doc);
  }
  for (const char* field : {"amount", "transaction_id", "out_trade_no", "trade_state", "mchid"}) {
    auto doc = base;
    doc.erase(field);
    cases.push_back(doc);
  }
  auto long_id = base;
  long_id["out_trade_no"] = std::string(codec::kMaxIdBytes + 1, 'p');
  cases.push_back(long_id);
  auto control = base;
  control["transaction_id"] = "42\n00";
  cases.push_back(control);
  for (const auto& doc : cases) {
    const auto body = body_with_resource(sealed_resource(doc.dump()));
    EXPECT_EQ(reason_of(verify(channel, signed_request(body))), RejectReason::unusable)
        << doc.dump();
  }
}

TEST(WechatChannel, OversizedBodyIsMalformed) {
  const std::string huge(kGatewayBodyBytesMax + 1, ' ');
  EXPECT_EQ(reason_of(verify(make_channel(), signed_request(huge))), RejectReason::malformed);
}

// ---- Channel surface -----------------------------------------------------------------------

TEST(WechatChannel, AckAndFailureBodiesAreJson) {
  const auto channel = make_channel();
  EXPECT_EQ(channel.ack_body(), "{\"code\":\"SUCCESS\",\"message\":\"成功\"}");
  EXPECT_EQ(channel.content_type(), "application/json");
  const auto failure = json::parse(channel.failure_body("amount does not match \"x\""));
  EXPECT_EQ(failure["code"], "FAIL");
  EXPECT_EQ(failure["message"], "amount does not match \"x\"");
  EXPECT_NO_THROW((void)channel.failure_body("\xFF invalid utf-8"));
}

TEST(WechatChannel, VerifiesConcurrentlyFromSeveralThreads) {
  const auto channel = make_channel();
  const auto good = signed_request(body_for(transaction()));
  const auto bad = signed_request(body_for(transaction()), kSerial, "someone-else");
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (reason_of(verify(channel, good)) != std::nullopt ||
            reason_of(verify(channel, bad)) != RejectReason::bad_signature) {
          ++wrong;
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(wrong.load(), 0);
}

// ---- Factory -------------------------------------------------------------------------------

WechatConfig config_with(std::vector<WechatPlatformKeyPath> keys, std::string apiv3 = kApiV3Key) {
  WechatConfig config;
  config.mchid = kMchid;
  config.apiv3_key = std::move(apiv3);
  config.platform_keys = std::move(keys);
  return config;
}

TEST(WechatFactory, LoadsEveryPlatformKey) {
  const auto made =
      make_wechat_channel(config_with({{kSerial, test_key("wechat").public_pem_path},
                                       {kSerial2, test_key("wechat-next").public_pem_path}}));
  ASSERT_TRUE(made.ok()) << made.detail();
  const auto& channel = made.value();
  const auto request = signed_request(body_for(transaction()), kSerial2, "wechat-next");
  EXPECT_EQ(reason_of(channel->verify(InboundRequest{request.body, &request.headers, kNow})),
            std::nullopt);
}

TEST(WechatFactory, RefusesBadKeysWithOneLineNamingTheSerial) {
  const auto good = test_key("wechat").public_pem_path;
  const std::vector<std::pair<WechatConfig, std::string>> cases = {
      {config_with({{kSerial, "/nonexistent/key.pem"}}), kSerial},
      {config_with({{kSerial, test_key("wechat").private_pem_path}}), "no PEM public key"},
      {config_with({{kSerial, good}, {kSerial, good}}), "repeated"},
      {config_with({{"", good}}), "empty"},
      {config_with({}), "no platform key"},
      {config_with({{kSerial, good}}, "short-key"), "must be exactly 32"},
  };
  for (const auto& [config, expected] : cases) {
    const auto refused = make_wechat_channel(config);
    ASSERT_FALSE(refused.ok()) << expected;
    EXPECT_EQ(refused.error(), errc::bad_config);
    const auto& why = refused.detail();
    EXPECT_NE(why.find(expected), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    EXPECT_EQ(why.find(kApiV3Key), std::string::npos) << "the APIv3 key must never be echoed";
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

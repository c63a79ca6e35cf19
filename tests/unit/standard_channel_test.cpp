// Unit tests for the `standard` channel (SPEC §11): the Standard Webhooks published vector,
// secret decoding, multi-signature headers, the window, and the SeatFlow event body.
#include "channels/standard/standard_channel.hpp"

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "codec/crypto.hpp"
#include "codec/digest.hpp"
#include "support/rejections.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

// The Standard Webhooks specification's test vector.
const std::string kVectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const std::string kVectorId = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const std::string kVectorTimestamp = "1614265330";
const std::string kVectorPayload = R"({"test": 2432232314})";
const std::string kVectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

constexpr std::int64_t kNowS = 1'700'000'000;
constexpr std::int64_t kNowMs = kNowS * 1000;

using seatflow::testing::reason_of;

TimestampedHmac vector_keys() {
  return TimestampedHmac(standard_keys({kVectorSecret}), kWebhookWindowMs);
}

std::optional<RejectReason> verify_vector(const std::string& signature_header) {
  const auto keys = vector_keys();
  // The vector is old: the clock is injected at its timestamp.
  return reason_of(verify_standard_signature(keys, kVectorId, kVectorTimestamp, signature_header,
                                             kVectorPayload, 1614265330LL * 1000));
}

TEST(StandardSignature, PublishedVectorVerifiesAndIsWhatWeSign) {
  EXPECT_EQ(verify_vector(kVectorSignature), std::nullopt);
  const auto keys = vector_keys();
  EXPECT_EQ(standard_signature(keys, kVectorId, 1614265330, kVectorPayload), kVectorSignature);
}

TEST(StandardSignature, OneCharacterChangedFails) {
  auto tampered = kVectorSignature;
  ASSERT_EQ(tampered.back(), '=');
  ASSERT_EQ(tampered[tampered.size() - 2], 'E');
  tampered[tampered.size() - 2] = 'A';
  EXPECT_EQ(verify_vector(tampered), RejectReason::bad_signature);
}

TEST(StandardSignature, AnyValidEntryAmongBrokenAndOtherVersionsPasses) {
  EXPECT_EQ(verify_vector("v1,bad v2,x " + kVectorSignature + " v1,bad"), std::nullopt);
  EXPECT_EQ(verify_vector("v1,bad v2,x v1,bad"), RejectReason::bad_signature);
  // The right MAC under another version is not a v1 signature.
  EXPECT_EQ(verify_vector("v2," + kVectorSignature.substr(3)), RejectReason::bad_signature);
  EXPECT_EQ(verify_vector("v1a,bad"), RejectReason::bad_signature);
}

TEST(StandardSignature, IdTimestampAndBodyAreAllSigned) {
  const auto keys = vector_keys();
  const auto now = 1614265330LL * 1000;
  EXPECT_EQ(reason_of(verify_standard_signature(keys, kVectorId + "x", kVectorTimestamp,
                                                kVectorSignature, kVectorPayload, now)),
            RejectReason::bad_signature);
  EXPECT_EQ(reason_of(verify_standard_signature(keys, kVectorId, "1614265331", kVectorSignature,
                                                kVectorPayload, now)),
            RejectReason::bad_signature);
  EXPECT_EQ(reason_of(verify_standard_signature(keys, kVectorId, kVectorTimestamp, kVectorSignature,
                                                kVectorPayload + "\n", now)),
            RejectReason::bad_signature);
}

TEST(StandardSignature, WindowBothWaysAndTimestampFormat) {
  const auto keys = vector_keys();
  const auto at = 1614265330LL * 1000;
  const auto check = [&](std::string_view timestamp, std::int64_t now) {
    return reason_of(verify_standard_signature(keys, kVectorId, timestamp, kVectorSignature,
                                               kVectorPayload, now));
  };
  EXPECT_EQ(check(kVectorTimestamp, at + 300'000), std::nullopt);
  EXPECT_EQ(check(kVectorTimestamp, at - 300'000), std::nullopt);
  EXPECT_EQ(check(kVectorTimestamp, at + 300'001), RejectReason::stale);
  EXPECT_EQ(check(kVectorTimestamp, at - 300'001), RejectReason::stale);
  // A timestamp that is not unix seconds was never verified: not stale, a bad signature.
  EXPECT_EQ(check("1614265330.0", at), RejectReason::bad_signature);
  EXPECT_EQ(check("-1", at), RejectReason::bad_signature);
  // SPEC §14: an old timestamp under a wrong MAC stays a forgery.
  const auto forged = "v1," + codec::base64_encode(std::string(32, 'x'));
  EXPECT_EQ(reason_of(verify_standard_signature(keys, kVectorId, kVectorTimestamp, forged,
                                                kVectorPayload, at + 600'000)),
            RejectReason::bad_signature);
}

TEST(StandardSignature, AHeaderOfThousandsOfEntriesIs400) {
  std::string header = kVectorSignature;
  for (int i = 0; i < 3000; ++i) {
    header += " v1,AAAA";
  }
  EXPECT_EQ(verify_vector(header), RejectReason::malformed);
  std::string many;
  for (std::size_t i = 0; i < kSignatureEntriesMax; ++i) {
    many += "v2,x ";
  }
  EXPECT_EQ(verify_vector(many + kVectorSignature), RejectReason::malformed);
  EXPECT_EQ(verify_vector(many), RejectReason::bad_signature) << "at the limit: parsed, no v1";
}

TEST(StandardSecret, DecodedAfterThePrefixPaddedOrNot) {
  const std::string raw = "0123456789abcdef0123456789abcde";  // 31 bytes: base64 ends in "="
  const auto padded = codec::base64_encode(raw);
  ASSERT_EQ(padded.back(), '=');
  const auto unpadded = padded.substr(0, padded.size() - 1);
  EXPECT_EQ(standard_secret_key("whsec_" + padded), raw);
  EXPECT_EQ(standard_secret_key("whsec_" + unpadded), raw);
  EXPECT_EQ(standard_secret_key(padded), raw) << "the prefix may be left out";
  EXPECT_EQ(standard_secret_key("whsec_"), std::nullopt);
  EXPECT_EQ(standard_secret_key("whsec_not base64!"), std::nullopt);
  EXPECT_EQ(standard_secret_key("whsec_" + std::string(4 * 100, 'A')), std::nullopt)
      << "over kStandardKeyBytesMax";
  EXPECT_THROW((void)standard_keys({kVectorSecret, "whsec_***"}), std::invalid_argument);
  // The key is the decoded bytes, not the text: signing with the text gives another MAC.
  const TimestampedHmac text_keys({kVectorSecret}, kWebhookWindowMs);
  EXPECT_NE(standard_signature(text_keys, kVectorId, 1614265330, kVectorPayload), kVectorSignature);
}

// A request signed for `channel` at kNowS (or `t`), with webhook-id `id`.
struct Request {
  std::string body;
  codec::Headers headers;
  [[nodiscard]] InboundRequest inbound(std::int64_t now_ms = kNowMs) const {
    return {body, &headers, now_ms};
  }
};

Request signed_request(const StandardChannel& channel, const std::string& body,
                       const std::string& id = "msg_1", std::int64_t t = kNowS) {
  return {
      body,
      {{std::string(kStandardIdHeader), id},
       {std::string(kStandardTimestampHeader), std::to_string(t)},
       {std::string(kStandardSignatureHeader), standard_signature(channel.keys(), id, t, body)}}};
}

StandardEvent event(std::string type = std::string(kStandardSucceeded)) {
  StandardEvent e;
  e.type = std::move(type);
  e.payment_no = "P-0001";
  e.amount_cents = 5000;
  e.trade_no = "T-9";
  e.timestamp_s = kNowS;
  return e;
}

StandardChannel channel_with(std::vector<std::string> secrets = {kVectorSecret}) {
  return StandardChannel(StandardConfig{std::move(secrets), kWebhookWindowMs});
}

TEST(StandardChannel, SucceededEventBecomesASuccessCallbackNamedByWebhookId) {
  const auto channel = channel_with();
  const auto result =
      channel.verify(signed_request(channel, standard_event_body(event()), "msg_abc").inbound());
  ASSERT_TRUE(result.ok()) << result.detail();
  const auto& callback = result.value();
  EXPECT_EQ(callback.channel, domain::Channel::standard);
  EXPECT_EQ(callback.kind, domain::CallbackKind::success);
  EXPECT_EQ(callback.callback_id, "msg_abc");
  EXPECT_EQ(callback.payment_no, "P-0001");
  EXPECT_EQ(callback.amount_cents, 5000);
  EXPECT_EQ(callback.channel_trade_no, "T-9");
  EXPECT_EQ(callback.payload_sha256, codec::business_digest(callback));
  EXPECT_EQ(channel.ack_body(), "");
}

TEST(StandardChannel, FailedEventAndOtherTypes) {
  const auto channel = channel_with();
  auto failed = event(std::string(kStandardFailed));
  failed.trade_no.clear();  // a failure may carry no trade number
  const auto result =
      channel.verify(signed_request(channel, standard_event_body(failed)).inbound());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value().kind, domain::CallbackKind::failure);
  EXPECT_EQ(reason_of(channel.verify(
                signed_request(channel, standard_event_body(event("payment.refunded"))).inbound())),
            RejectReason::unhandled_event);
}

TEST(StandardChannel, MissingOrBadFieldsAre400) {
  const auto channel = channel_with();
  using nlohmann::json;
  const auto doc = json::parse(standard_event_body(event()));
  const auto mutate = [&](auto change) {
    auto copy = doc;
    change(copy);
    return reason_of(channel.verify(signed_request(channel, copy.dump()).inbound()));
  };
  EXPECT_EQ(mutate([](json& d) { d["data"].erase("tradeNo"); }), RejectReason::unusable);
  EXPECT_EQ(mutate([](json& d) { d["data"].erase("amountCents"); }), RejectReason::unusable);
  EXPECT_EQ(mutate([](json& d) { d["data"]["amountCents"] = 50.5; }), RejectReason::unusable);
  EXPECT_EQ(mutate([](json& d) { d["data"]["paymentNo"] = ""; }), RejectReason::unusable);
  EXPECT_EQ(mutate([](json& d) { d.erase("data"); }), RejectReason::unusable);
  EXPECT_EQ(mutate([](json& d) { d["type"] = 7; }), RejectReason::unusable);
  const auto bad_id = signed_request(channel, standard_event_body(event()), "msg\x01");
  EXPECT_EQ(reason_of(channel.verify(bad_id.inbound())), RejectReason::unusable);
}

TEST(StandardChannel, MissingHeadersWrongSecretOrStaleIs401AndRotationWorks) {
  const auto channel = channel_with();
  const auto body = standard_event_body(event());
  auto request = signed_request(channel, body);
  for (const auto name : {kStandardIdHeader, kStandardTimestampHeader, kStandardSignatureHeader}) {
    auto missing = request;
    missing.headers.erase(std::string(name));
    EXPECT_EQ(reason_of(channel.verify(missing.inbound())), RejectReason::bad_signature) << name;
  }
  const auto other = channel_with({"whsec_" + codec::base64_encode("another key of some length")});
  EXPECT_EQ(reason_of(channel.verify(signed_request(other, body).inbound())),
            RejectReason::bad_signature);
  EXPECT_EQ(
      reason_of(channel.verify(signed_request(channel, body, "msg_1", kNowS + 301).inbound())),
      RejectReason::stale);
  const auto rotating =
      channel_with({"whsec_" + codec::base64_encode("another key of some length"), kVectorSecret});
  EXPECT_EQ(reason_of(rotating.verify(signed_request(channel, body).inbound())), std::nullopt);
  EXPECT_EQ(reason_of(rotating.verify(signed_request(other, body).inbound())), std::nullopt);
}

TEST(StandardChannel, RefusesUnusableConfiguration) {
  EXPECT_THROW(channel_with({}), std::invalid_argument);
  EXPECT_THROW(channel_with({"whsec_!!"}), std::invalid_argument);
  EXPECT_THROW(channel_with(std::vector<std::string>(kWebhookSecretsMax + 1, kVectorSecret)),
               std::invalid_argument);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

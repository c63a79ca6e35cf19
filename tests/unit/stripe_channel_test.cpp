// Unit tests for the `stripe` channel (SPEC §11): stripe-go's published vectors, v1-only parsing,
// rotation, the window, bounded headers, and the PaymentIntent event mapping.
#include "channels/stripe/stripe_channel.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "codec/digest.hpp"
#include "http/status.hpp"
#include "support/rejections.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

// stripe-go's webhook test vectors (webhook/client_test.go).
const std::string kSecret = "whsec_test_secret";
const std::string kRolledSecret = "whsec_test_secret_rolled_key";
constexpr std::int64_t kVectorT = 1614265330;
const std::string kVectorBody = R"({"id":"evt_test_webhook","object":"event"})";
const std::string kVectorV1 = "3c5817089d739023dd6190f70a3757e04f7a2fd8b5dab12c2e000f51970dccff";
const std::string kRolledV1 = "585d2e5803f3ac3facba728003442f922de8fe6eab3f68e569d21cf70e735a0f";

constexpr std::int64_t kNowS = 1'700'000'000;
constexpr std::int64_t kNowMs = kNowS * 1000;

using seatflow::testing::reason_of;

std::string vector_header(const std::string& v1s) {
  return "t=" + std::to_string(kVectorT) + "," + v1s;
}

TEST(StripeSignature, StripeGoVectorVerifiesAndIsWhatWeSign) {
  const TimestampedHmac keys({kSecret}, kWebhookWindowMs);
  const auto now = kVectorT * 1000;  // the vector is old: the clock is injected
  EXPECT_EQ(
      reason_of(verify_stripe_signature(keys, vector_header("v1=" + kVectorV1), kVectorBody, now)),
      std::nullopt);
  EXPECT_EQ(stripe_signature_header(keys, kVectorT, kVectorBody), vector_header("v1=" + kVectorV1));
  // Upper-case hex is the same bytes.
  std::string upper = kVectorV1;
  for (auto& c : upper) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  EXPECT_EQ(
      reason_of(verify_stripe_signature(keys, vector_header("v1=" + upper), kVectorBody, now)),
      std::nullopt);
}

TEST(StripeSignature, RolledSecretVectorAndAHeaderCarryingBothPassWithEitherSecret) {
  const auto now = kVectorT * 1000;
  const TimestampedHmac rolled({kRolledSecret}, kWebhookWindowMs);
  EXPECT_EQ(stripe_signature_header(rolled, kVectorT, kVectorBody),
            vector_header("v1=" + kRolledV1));
  const auto both = vector_header("v1=" + kVectorV1 + ",v1=" + kRolledV1);
  for (const auto& secrets :
       {std::vector<std::string>{kSecret}, std::vector<std::string>{kRolledSecret},
        std::vector<std::string>{kRolledSecret, kSecret}}) {
    const TimestampedHmac keys(secrets, kWebhookWindowMs);
    EXPECT_EQ(reason_of(verify_stripe_signature(keys, both, kVectorBody, now)), std::nullopt)
        << secrets.front();
  }
  // Each single signature passes only under its own secret.
  const TimestampedHmac original({kSecret}, kWebhookWindowMs);
  EXPECT_EQ(reason_of(verify_stripe_signature(original, vector_header("v1=" + kRolledV1),
                                              kVectorBody, now)),
            RejectReason::bad_signature);
  EXPECT_EQ(reason_of(verify_stripe_signature(rolled, vector_header("v1=" + kVectorV1), kVectorBody,
                                              now)),
            RejectReason::bad_signature);
}

TEST(StripeSignature, OnlyV1CountsAndAHeaderWithoutV1Is401) {
  const TimestampedHmac keys({kSecret}, kWebhookWindowMs);
  const auto now = kVectorT * 1000;
  // The right MAC under another scheme name is ignored: v0 and unknown schemes never verify.
  for (const auto& entries :
       {"v0=" + kVectorV1, "v2=" + kVectorV1, "V1=" + kVectorV1, std::string("v1")}) {
    EXPECT_EQ(reason_of(verify_stripe_signature(keys, vector_header(entries), kVectorBody, now)),
              RejectReason::bad_signature)
        << entries;
  }
  // Ignored entries around a valid v1 do not hurt; a broken v1 beside it is skipped.
  EXPECT_EQ(reason_of(verify_stripe_signature(
                keys, vector_header("v0=abc,v1=zz,scheme=x,v1=" + kVectorV1 + ",v1=00"),
                kVectorBody, now)),
            std::nullopt);
  // The body is what was signed, byte for byte.
  EXPECT_EQ(reason_of(verify_stripe_signature(keys, vector_header("v1=" + kVectorV1),
                                              kVectorBody + " ", now)),
            RejectReason::bad_signature);
}

TEST(StripeSignature, TimestampMustBePresentOnceAndFresh) {
  const TimestampedHmac keys({kSecret}, kWebhookWindowMs);
  const auto now = kVectorT * 1000;
  const auto v1 = "v1=" + kVectorV1;
  EXPECT_EQ(reason_of(verify_stripe_signature(keys, v1, kVectorBody, now)),
            RejectReason::bad_signature);
  EXPECT_EQ(reason_of(verify_stripe_signature(keys, "t=abc," + v1, kVectorBody, now)),
            RejectReason::bad_signature);
  EXPECT_EQ(reason_of(verify_stripe_signature(keys, vector_header(v1) + ",t=1", kVectorBody, now)),
            RejectReason::bad_signature);
  EXPECT_EQ(reason_of(verify_stripe_signature(keys, vector_header(v1), kVectorBody, now + 300'000)),
            std::nullopt);
  EXPECT_EQ(reason_of(verify_stripe_signature(keys, vector_header(v1), kVectorBody, now - 300'000)),
            std::nullopt);
  EXPECT_EQ(reason_of(verify_stripe_signature(keys, vector_header(v1), kVectorBody, now + 300'001)),
            RejectReason::stale);
  EXPECT_EQ(reason_of(verify_stripe_signature(keys, vector_header(v1), kVectorBody, now - 300'001)),
            RejectReason::stale);
}

// SPEC §14: an old timestamp with a wrong MAC is a forgery, not a wrong clock.
TEST(StripeSignature, AnOldForgeryIsBadSignatureNotStale) {
  const TimestampedHmac keys({kSecret}, kWebhookWindowMs);
  const auto now = kVectorT * 1000 + 600'000;
  const auto forged = "v1=" + std::string(64, 'a');
  EXPECT_EQ(reason_of(verify_stripe_signature(keys, vector_header(forged), kVectorBody, now)),
            RejectReason::bad_signature);
  const auto stale =
      verify_stripe_signature(keys, vector_header("v1=" + kVectorV1), kVectorBody, now);
  EXPECT_EQ(testing::reason_of(stale), RejectReason::stale);
  EXPECT_EQ(testing::skew_ms_of(stale), 600'000);
}

TEST(StripeSignature, AHeaderOfThousandsOfEntriesIs400Quickly) {
  const TimestampedHmac keys({kSecret}, kWebhookWindowMs);
  std::string header = vector_header("v1=" + kVectorV1);
  for (int i = 0; i < 5000; ++i) {
    header += ",v1=" + kRolledV1;
  }
  const auto started = std::chrono::steady_clock::now();
  // Over the byte bound, and (under it) over the entry bound: both malformed, no MAC computed.
  EXPECT_EQ(reason_of(verify_stripe_signature(keys, header, kVectorBody, kVectorT * 1000)),
            RejectReason::malformed);
  std::string many = vector_header("v1=" + kVectorV1);
  for (std::size_t i = 0; i < kSignatureEntriesMax; ++i) {
    many += ",v0=1";
  }
  ASSERT_LE(many.size(), kSignatureHeaderBytesMax);
  EXPECT_EQ(reason_of(verify_stripe_signature(keys, many, kVectorBody, kVectorT * 1000)),
            RejectReason::malformed);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(50));
}

// A signed request for the channel under test, at kNowS unless told otherwise.
struct Request {
  std::string body;
  codec::Headers headers;
  [[nodiscard]] InboundRequest inbound(std::int64_t now_ms = kNowMs) const {
    return {body, &headers, now_ms};
  }
};

StripeEvent event(std::string type = std::string(kStripeSucceeded)) {
  StripeEvent e;
  e.id = "evt_1";
  e.type = std::move(type);
  e.payment_no = "P-0001";
  e.payment_intent_id = "pi_3Ab";
  e.amount = 5000;
  e.currency = "cny";
  e.created_s = kNowS;
  return e;
}

Request signed_request(const StripeChannel& channel, const std::string& body,
                       std::int64_t t = kNowS) {
  return {
      body,
      {{std::string(kStripeSignatureHeader), stripe_signature_header(channel.keys(), t, body)}}};
}

StripeChannel channel_with(std::vector<std::string> secrets = {kSecret},
                           std::string currency = "cny") {
  return StripeChannel(StripeConfig{std::move(secrets), std::move(currency), kWebhookWindowMs});
}

TEST(StripeChannel, SucceededEventBecomesASuccessCallback) {
  const auto channel = channel_with();
  const auto result = channel.verify(signed_request(channel, stripe_event_body(event())).inbound());
  ASSERT_TRUE(result.ok()) << result.detail();
  const auto& callback = result.value();
  EXPECT_EQ(callback.channel, domain::Channel::stripe);
  EXPECT_EQ(callback.kind, domain::CallbackKind::success);
  EXPECT_EQ(callback.callback_id, "evt_1");
  EXPECT_EQ(callback.payment_no, "P-0001");
  EXPECT_EQ(callback.channel_trade_no, "pi_3Ab");
  EXPECT_EQ(callback.amount_cents, 5000);
  EXPECT_EQ(callback.payload_sha256, codec::business_digest(callback));
  EXPECT_EQ(channel.ack_body(), R"({"received":true})");
  EXPECT_EQ(channel.content_type(), "application/json");
}

TEST(StripeChannel, FailedEventIsAFailureAndOtherTypesAreAcknowledged) {
  const auto channel = channel_with();
  const auto failed = channel.verify(
      signed_request(channel, stripe_event_body(event(std::string(kStripeFailed)))).inbound());
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed.value().kind, domain::CallbackKind::failure);
  for (const auto* type : {"charge.succeeded", "payment_intent.created", "customer.created"}) {
    const auto other =
        channel.verify(signed_request(channel, stripe_event_body(event(type))).inbound());
    EXPECT_EQ(reason_of(other), RejectReason::unhandled_event) << type;
    EXPECT_EQ(http::http_status(RejectReason::unhandled_event), 200);
  }
  // An event type SeatFlow ignores still needs a valid signature.
  auto forged = signed_request(channel, stripe_event_body(event("charge.succeeded")));
  forged.body += " ";
  EXPECT_EQ(reason_of(channel.verify(forged.inbound())), RejectReason::bad_signature);
}

TEST(StripeChannel, CurrencyMustBeTheConfiguredOne) {
  const auto channel = channel_with();
  auto usd = event();
  usd.currency = "usd";
  EXPECT_EQ(reason_of(channel.verify(signed_request(channel, stripe_event_body(usd)).inbound())),
            RejectReason::unusable);
  auto upper = event();
  upper.currency = "CNY";
  EXPECT_EQ(reason_of(channel.verify(signed_request(channel, stripe_event_body(upper)).inbound())),
            std::nullopt);
  const auto usd_channel = channel_with({kSecret}, "usd");
  EXPECT_EQ(
      reason_of(usd_channel.verify(signed_request(usd_channel, stripe_event_body(usd)).inbound())),
      std::nullopt);
}

TEST(StripeChannel, MissingOrBadFieldsAre400) {
  const auto channel = channel_with();
  auto doc = nlohmann::json::parse(stripe_event_body(event()));
  const auto mutate = [&](auto change) {
    auto copy = doc;
    change(copy);
    return reason_of(channel.verify(signed_request(channel, copy.dump()).inbound()));
  };
  using nlohmann::json;
  EXPECT_EQ(mutate([](json& d) { d["data"]["object"]["metadata"].erase("paymentNo"); }),
            RejectReason::unusable);
  EXPECT_EQ(mutate([](json& d) { d["data"]["object"]["amount"] = -1; }), RejectReason::unusable);
  EXPECT_EQ(mutate([](json& d) { d["data"]["object"]["amount"] = "5000"; }),
            RejectReason::unusable);
  EXPECT_EQ(mutate([](json& d) { d["data"]["object"].erase("id"); }), RejectReason::unusable);
  EXPECT_EQ(mutate([](json& d) { d["id"] = "evt\n1"; }), RejectReason::unusable);
  EXPECT_EQ(mutate([](json& d) { d.erase("type"); }), RejectReason::unusable);
  EXPECT_EQ(mutate([](json& d) { d["data"] = 1; }), RejectReason::unusable);
  EXPECT_EQ(reason_of(channel.verify(signed_request(channel, "[1]").inbound())),
            RejectReason::unusable);
}

TEST(StripeChannel, SignatureHeaderMissingWrongSecretOrStaleIs401) {
  const auto channel = channel_with();
  const auto body = stripe_event_body(event());
  const codec::Headers none;
  EXPECT_EQ(reason_of(channel.verify({body, &none, kNowMs})), RejectReason::bad_signature);
  EXPECT_EQ(reason_of(channel.verify({body, nullptr, kNowMs})), RejectReason::bad_signature);
  const auto other = channel_with({"whsec_another"});
  EXPECT_EQ(reason_of(channel.verify(signed_request(other, body).inbound())),
            RejectReason::bad_signature);
  EXPECT_EQ(reason_of(channel.verify(signed_request(channel, body, kNowS - 301).inbound())),
            RejectReason::stale);
  // Rotation: a channel that knows both secrets accepts each.
  const auto rotating = channel_with({"whsec_another", kSecret});
  EXPECT_EQ(reason_of(rotating.verify(signed_request(channel, body).inbound())), std::nullopt);
  EXPECT_EQ(reason_of(rotating.verify(signed_request(other, body).inbound())), std::nullopt);
}

TEST(StripeChannel, DigestIgnoresTheSignatureTimeAndFollowsTheAmount) {
  const auto channel = channel_with();
  const auto body = stripe_event_body(event());
  const auto a = channel.verify(signed_request(channel, body, kNowS).inbound());
  const auto b = channel.verify(signed_request(channel, body, kNowS - 100).inbound());
  auto more = event();
  more.amount = 5001;
  const auto c = channel.verify(signed_request(channel, stripe_event_body(more)).inbound());
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(a.value().payload_sha256, b.value().payload_sha256);
  EXPECT_NE(a.value().payload_sha256, c.value().payload_sha256);
}

TEST(StripeChannel, RefusesUnusableConfiguration) {
  EXPECT_THROW(channel_with({}), std::invalid_argument);
  EXPECT_THROW(channel_with({kSecret, ""}), std::invalid_argument);
  EXPECT_THROW(channel_with({kSecret}, ""), std::invalid_argument);
  EXPECT_THROW(channel_with(std::vector<std::string>(kWebhookSecretsMax + 1, kSecret)),
               std::invalid_argument);
  const auto body = nlohmann::json::parse(channel_with().failure_body("bad \"x\""));
  EXPECT_EQ(body.value("error", ""), "bad \"x\"");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

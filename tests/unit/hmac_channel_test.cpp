// Unit tests for the `hmac` channel (SPEC §5), its rejection-to-status map and the channel
// registry.
#include "channels/hmac/hmac_channel.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "channels/registry.hpp"
#include "codec/digest.hpp"
#include "codec/text.hpp"
#include "http/status.hpp"
#include "support/rejections.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;

const std::string kSecret = "seatflow-test-secret";
constexpr std::int64_t kNow = 1'700'000'000'000;
constexpr std::int64_t kWindow = 300'000;

// Prefix + number; spelled out because GCC 12 reports a false -Wrestrict for "lit" + std::string.
std::string numbered(std::string_view prefix, long long number) {
  std::string text(prefix);
  text.append(std::to_string(number));
  return text;
}

HmacChannel make_channel(std::vector<std::string> secrets = {kSecret}) {
  return HmacChannel(HmacConfig{std::move(secrets), kWindow});
}

// HMAC-SHA256 with OpenSSL's one-shot API, independent of the channel's reused contexts.
std::string one_shot_hmac(const std::string& secret, const std::string& message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  const auto* out =
      HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_len);
  EXPECT_NE(out, nullptr);
  return codec::to_lower_hex(std::string(reinterpret_cast<const char*>(mac), mac_len));
}

std::string sign_with(const std::string& secret, const std::string& id, const std::string& payment,
                      int status, std::int64_t timestamp_ms) {
  return one_shot_hmac(secret, hmac_canonical(id, payment, status, timestamp_ms));
}

json body_json(const std::string& id, const std::string& payment, int status,
               std::int64_t timestamp_ms, const std::string& secret = kSecret) {
  return json{{"callbackId", id},
              {"paymentNo", payment},
              {"status", status},
              {"timestamp", timestamp_ms},
              {"sign", sign_with(secret, id, payment, status, timestamp_ms)}};
}

Result<domain::VerifiedCallback> verify_at(const HmacChannel& channel, const std::string& body,
                                           std::int64_t now_ms = kNow) {
  const codec::Headers headers;
  return channel.verify(InboundRequest{body, &headers, now_ms});
}

// The rejection reason, or nullopt when the callback verified.
std::optional<RejectReason> reason_of(const Result<domain::VerifiedCallback>& result) {
  return result.ok() ? std::nullopt : std::optional(errc_of(result.error()));
}

std::optional<RejectReason> verify_reason(const HmacChannel& channel, const json& body,
                                          std::int64_t now_ms = kNow) {
  return reason_of(verify_at(channel, body.dump(), now_ms));
}

// ---- Known vectors -------------------------------------------------------------------------

TEST(HmacChannel, MatchesOpenSslCliVector) {
  // Computed in the shell, independently of this code base:
  //   K=seatflow-test-secret
  //   printf 'cb-0001\nP202401010001\n1\n1700000000000' | openssl dgst -sha256 -hmac "$K"
  constexpr std::string_view kExpected =
      "969f74ea78a273b85412e1f472954cd1007b8bebe88f7023e98c02975f4f0666";
  EXPECT_EQ(hmac_canonical("cb-0001", "P202401010001", 1, 1'700'000'000'000),
            "cb-0001\nP202401010001\n1\n1700000000000");
  const auto channel = make_channel();
  EXPECT_EQ(channel.sign("cb-0001", "P202401010001", 1, 1'700'000'000'000), kExpected);
  const json body = {{"callbackId", "cb-0001"},
                     {"paymentNo", "P202401010001"},
                     {"status", 1},
                     {"timestamp", 1'700'000'000'000},
                     {"sign", kExpected}};
  EXPECT_EQ(verify_reason(channel, body, 1'700'000'000'000), std::nullopt);
}

TEST(HmacChannel, SecondCliVectorVerifiesUnderRotatedSecret) {
  // Computed in the shell:
  //   K=rotated-secret-B
  //   printf 'cb-0002\nP202401010002\n2\n1700000123456' | openssl dgst -sha256 -hmac "$K"
  const json body = {{"callbackId", "cb-0002"},
                     {"paymentNo", "P202401010002"},
                     {"status", 2},
                     {"timestamp", 1'700'000'123'456},
                     {"sign", "e55dcc69a572b9903f234a9b868cc3331b789530ca5795eafee01d9e004c3761"}};
  const auto channel = make_channel({"new-signing-secret", "rotated-secret-B"});
  const auto result = verify_at(channel, body.dump(), 1'700'000'123'456);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value().kind, domain::CallbackKind::failure);
}

TEST(HmacChannel, SignMatchesOneShotHmacForManyInputs) {
  const auto channel = make_channel();
  for (int i = 0; i < 50; ++i) {
    const std::string id = numbered("cb-", i * 7919);
    const std::string payment = numbered("P", i);
    const int status = 1 + i % 2;
    const std::int64_t timestamp = kNow + i * 1'000;
    EXPECT_EQ(channel.sign(id, payment, status, timestamp),
              sign_with(kSecret, id, payment, status, timestamp));
  }
}

// ---- Accepted callbacks --------------------------------------------------------------------

TEST(HmacChannel, VerifiedCallbackCarriesTheFields) {
  const auto channel = make_channel();
  for (const int status : {1, 2}) {
    const auto result = verify_at(channel, body_json("cb-9", "P-9", status, kNow).dump());
    ASSERT_TRUE(result.ok());
    const auto& callback = result.value();
    EXPECT_EQ(callback.callback_id, "cb-9");
    EXPECT_EQ(callback.payment_no, "P-9");
    EXPECT_EQ(callback.channel, domain::Channel::hmac);
    EXPECT_EQ(callback.kind,
              status == 1 ? domain::CallbackKind::success : domain::CallbackKind::failure);
    EXPECT_FALSE(callback.amount_cents.has_value());
    EXPECT_TRUE(callback.channel_trade_no.empty());
    EXPECT_EQ(callback.payload_sha256, codec::business_digest(callback));
  }
}

TEST(HmacChannel, UpperCaseHexAccepted) {
  const auto channel = make_channel();
  json body = body_json("cb-1", "P-1", 1, kNow);
  std::string sign = body["sign"];
  for (auto& c : sign) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  ASSERT_NE(sign, body["sign"].get<std::string>());
  body["sign"] = sign;
  EXPECT_EQ(verify_reason(channel, body), std::nullopt);
}

TEST(HmacChannel, ASignWithOneCharacterThatIsNotHexIsRefusedWherever) {
  const auto channel = make_channel();
  const json good = body_json("cb-1", "P-1", 1, kNow);
  const std::string sign = good["sign"];
  // The characters beside the digit ranges, each at every position: a decoder that took one for a
  // digit would still fail the comparison, so the reason must be the sign's form, not chance.
  for (const char bad : {'/', ':', '@', 'G', '`', 'g', ' '}) {
    for (std::size_t at = 0; at < sign.size(); ++at) {
      json body = good;
      std::string altered = sign;
      altered[at] = bad;
      body["sign"] = altered;
      EXPECT_EQ(verify_reason(channel, body), RejectReason::bad_signature)
          << "'" << bad << "' at " << at;
    }
  }
}

TEST(HmacChannel, HexDigitValuesOfEveryByte) {
  for (int byte = 0; byte < 256; ++byte) {
    const char c = static_cast<char>(byte);
    int expected = -1;
    if (byte >= '0' && byte <= '9') {
      expected = byte - '0';
    } else if (byte >= 'a' && byte <= 'f') {
      expected = byte - 'a' + 10;
    } else if (byte >= 'A' && byte <= 'F') {
      expected = byte - 'A' + 10;
    }
    EXPECT_EQ(codec::hex_digit_value(c), expected) << byte;
  }
}

TEST(HmacChannel, UnknownExtraFieldsAreIgnored) {
  const auto channel = make_channel();
  json body = body_json("cb-1", "P-1", 1, kNow);
  body["note"] = "not signed, not used";
  EXPECT_EQ(verify_reason(channel, body), std::nullopt);
}

// ---- Secrets and rotation ------------------------------------------------------------------

TEST(HmacChannel, WrongSecretIsBadSignature) {
  const auto channel = make_channel();
  EXPECT_EQ(verify_reason(channel, body_json("cb-1", "P-1", 1, kNow, "some-other-secret")),
            RejectReason::bad_signature);
}

TEST(HmacChannel, EverySecretInTheRotationListVerifies) {
  const auto channel = make_channel({"first", "second", "third"});
  for (const std::string secret : {"first", "second", "third"}) {
    EXPECT_EQ(verify_reason(channel, body_json("cb-1", "P-1", 1, kNow, secret)), std::nullopt)
        << secret;
  }
  EXPECT_EQ(verify_reason(channel, body_json("cb-1", "P-1", 1, kNow, "fourth")),
            RejectReason::bad_signature);
}

TEST(HmacChannel, FirstSecretSigns) {
  const auto channel = make_channel({"first", "second"});
  const auto sign = channel.sign("cb-1", "P-1", 1, kNow);
  EXPECT_EQ(sign, sign_with("first", "cb-1", "P-1", 1, kNow));
  EXPECT_NE(sign, sign_with("second", "cb-1", "P-1", 1, kNow));
}

TEST(HmacChannel, ChannelsDoNotShareThreadContexts) {
  // A channel created after another is destroyed (perhaps at the same address) must not reuse
  // the dead channel's keyed contexts.
  const json body = body_json("cb-1", "P-1", 1, kNow, "alpha");
  {
    const auto alpha = make_channel({"alpha"});
    EXPECT_EQ(verify_reason(alpha, body), std::nullopt);
  }
  const auto beta = make_channel({"beta"});
  EXPECT_EQ(verify_reason(beta, body), RejectReason::bad_signature);
}

TEST(HmacChannel, ManyLiveChannelsOnOneThreadKeepTheirOwnKeys) {
  std::vector<std::unique_ptr<HmacChannel>> channels;
  for (int i = 0; i < 40; ++i) {
    channels.push_back(
        std::make_unique<HmacChannel>(HmacConfig{{numbered("secret-", i)}, kWindow}));
  }
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 40; ++i) {
      const auto own = body_json("cb", "P", 1, kNow, numbered("secret-", i));
      const auto next = body_json("cb", "P", 1, kNow, numbered("secret-", (i + 1) % 40));
      EXPECT_EQ(verify_reason(*channels[i], own), std::nullopt);
      EXPECT_EQ(verify_reason(*channels[i], next), RejectReason::bad_signature);
    }
  }
}

// ---- Tampering -----------------------------------------------------------------------------

TEST(HmacChannel, OneFlippedByteInAnyFieldIsBadSignature) {
  const auto channel = make_channel();
  const std::string id = "cb-flip-0001";
  const std::string payment = "P-flip-0001";
  const json good = body_json(id, payment, 1, kNow);
  ASSERT_EQ(verify_reason(channel, good), std::nullopt);
  for (const char* field : {"callbackId", "paymentNo", "sign"}) {
    const std::string original = good[field];
    for (std::size_t i = 0; i < original.size(); ++i) {
      json tampered = good;
      std::string value = original;
      // Stay printable (and hex, for the sign) so only the signature check can object.
      value[i] = value[i] == 'a' ? 'b' : 'a';
      tampered[field] = value;
      EXPECT_EQ(verify_reason(channel, tampered), RejectReason::bad_signature)
          << field << " byte " << i;
    }
  }
  json status = good;
  status["status"] = 2;
  EXPECT_EQ(verify_reason(channel, status), RejectReason::bad_signature);
  for (const std::int64_t delta : {-1, 1, 10}) {
    json timestamp = good;
    timestamp["timestamp"] = kNow + delta;
    EXPECT_EQ(verify_reason(channel, timestamp), RejectReason::bad_signature) << delta;
  }
}

TEST(HmacChannel, SwappingIdsIsBadSignature) {
  const auto channel = make_channel();
  json body = body_json("AAA", "BBB", 1, kNow);
  body["callbackId"] = "BBB";
  body["paymentNo"] = "AAA";
  EXPECT_EQ(verify_reason(channel, body), RejectReason::bad_signature);
}

// ---- Timestamp window ----------------------------------------------------------------------

TEST(HmacChannel, TimestampWindowIsInclusive) {
  const auto channel = make_channel();
  EXPECT_EQ(verify_reason(channel, body_json("cb", "P", 1, kNow - kWindow)), std::nullopt);
  EXPECT_EQ(verify_reason(channel, body_json("cb", "P", 1, kNow + kWindow)), std::nullopt);
  EXPECT_EQ(verify_reason(channel, body_json("cb", "P", 1, kNow - kWindow - 1)),
            RejectReason::stale);
  EXPECT_EQ(verify_reason(channel, body_json("cb", "P", 1, kNow + kWindow + 1)),
            RejectReason::stale);
}

TEST(HmacChannel, ExtremeTimestampsAreStaleNotOverflow) {
  const auto channel = make_channel();
  for (const std::int64_t timestamp :
       {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
        std::int64_t{0}, std::int64_t{-1}}) {
    EXPECT_EQ(verify_reason(channel, body_json("cb", "P", 1, timestamp)), RejectReason::stale)
        << timestamp;
  }
}

// SPEC §14: the signature first, the window second. A stale rejection carries the skew seen; a
// forgery with an old timestamp stays a forgery.
TEST(HmacChannel, StaleCarriesTheSkewAndAnOldForgeryIsBadSignature) {
  const auto channel = make_channel();
  const auto stale = verify_at(channel, body_json("cb", "P", 1, kNow - 600'000).dump());
  EXPECT_EQ(testing::reason_of(stale), RejectReason::stale);
  EXPECT_EQ(testing::skew_ms_of(stale), 600'000);
  const auto ahead = verify_at(channel, body_json("cb", "P", 1, kNow + 600'000).dump());
  EXPECT_EQ(testing::skew_ms_of(ahead), -600'000);
  for (const std::int64_t timestamp : {kNow - 600'000, kNow + 600'000, std::int64_t{0}}) {
    EXPECT_EQ(verify_reason(channel, body_json("cb", "P", 1, timestamp, "not-the-secret")),
              RejectReason::bad_signature)
        << timestamp;
  }
  const auto extreme =
      verify_at(channel, body_json("cb", "P", 1, std::numeric_limits<std::int64_t>::min()).dump());
  EXPECT_EQ(testing::skew_ms_of(extreme), std::numeric_limits<std::int64_t>::max());
}

TEST(HmacChannel, CustomWindowIsHonoured) {
  const HmacChannel channel(HmacConfig{{kSecret}, 1'000});
  EXPECT_EQ(verify_reason(channel, body_json("cb", "P", 1, kNow - 1'000)), std::nullopt);
  EXPECT_EQ(verify_reason(channel, body_json("cb", "P", 1, kNow - 1'001)), RejectReason::stale);
}

// An authenticated replay (SPEC §12) waives only the window: the signature still decides.
TEST(HmacChannel, AWaivedWindowAcceptsAStaleCallbackButNeverABadSignature) {
  const auto channel = make_channel();
  const codec::Headers headers;
  const auto stale = body_json("cb", "P", 1, kNow - 10 * kWindow).dump();
  EXPECT_EQ(reason_of(channel.verify(InboundRequest{stale, &headers, kNow})), RejectReason::stale);
  EXPECT_EQ(reason_of(channel.verify(InboundRequest{stale, &headers, kNow, true})), std::nullopt);
  const auto forged = body_json("cb", "P", 1, kNow - 10 * kWindow, "wrong").dump();
  EXPECT_EQ(reason_of(channel.verify(InboundRequest{forged, &headers, kNow, true})),
            RejectReason::bad_signature);
}

TEST(HmacChannel, SignatureIsCheckedBeforeTheWindow) {
  const auto channel = make_channel();
  EXPECT_EQ(verify_reason(channel, body_json("cb", "P", 1, kNow - 10 * kWindow, "wrong")),
            RejectReason::bad_signature);
}

// ---- Status --------------------------------------------------------------------------------

TEST(HmacChannel, SignedStatusOutsideOneAndTwoIsBadStatus) {
  const auto channel = make_channel();
  for (const int status : {0, 3, -1, 4, 100}) {
    EXPECT_EQ(verify_reason(channel, body_json("cb", "P", status, kNow)), RejectReason::bad_status)
        << status;
  }
}

TEST(HmacChannel, UnsignedBadStatusIsBadSignature) {
  const auto channel = make_channel();
  json body = body_json("cb", "P", 1, kNow);
  body["status"] = 3;
  EXPECT_EQ(verify_reason(channel, body), RejectReason::bad_signature);
}

TEST(HmacChannel, StaleIsReportedBeforeBadStatus) {
  const auto channel = make_channel();
  EXPECT_EQ(verify_reason(channel, body_json("cb", "P", 3, kNow - kWindow - 1)),
            RejectReason::stale);
}

TEST(HmacChannel, NonIntegerStatusIsMalformed) {
  const auto channel = make_channel();
  json body = body_json("cb", "P", 1, kNow);
  for (const json& status : {json("1"), json(1.0), json(1.5), json(true), json(nullptr),
                             json::array({1}), json(18'446'744'073'709'551'615ULL)}) {
    body["status"] = status;
    EXPECT_EQ(verify_reason(channel, body), RejectReason::malformed) << status.dump();
  }
}

// ---- Malformed bodies ----------------------------------------------------------------------

TEST(HmacChannel, UnparseableBodiesAreMalformed) {
  const auto channel = make_channel();
  const std::vector<std::string> bodies = {"",
                                           "{",
                                           "}",
                                           "[]",
                                           "null",
                                           "42",
                                           "\"text\"",
                                           "{\"callbackId\":",
                                           "not json at all",
                                           "{\"callbackId\":\"a\",}",
                                           std::string("{\"callbackId\":\"\xff\xfe\"}"),
                                           std::string("{\"a\":1}\0", 8)};
  for (const auto& body : bodies) {
    EXPECT_EQ(reason_of(verify_at(channel, body)), RejectReason::malformed) << body;
  }
}

TEST(HmacChannel, EachMissingFieldIsMalformed) {
  const auto channel = make_channel();
  for (const char* field : {"callbackId", "paymentNo", "status", "timestamp", "sign"}) {
    json body = body_json("cb", "P", 1, kNow);
    body.erase(field);
    EXPECT_EQ(verify_reason(channel, body), RejectReason::malformed) << field;
  }
}

TEST(HmacChannel, MistypedFieldsAreMalformed) {
  const auto channel = make_channel();
  const std::vector<std::pair<const char*, json>> cases = {
      {"callbackId", 17},
      {"callbackId", nullptr},
      {"paymentNo", json::array()},
      {"paymentNo", 1.5},
      {"timestamp", "1700000000000"},
      {"timestamp", 1.7e12},
      {"timestamp", nullptr},
      {"sign", 12345},
      {"sign", json::object()},
  };
  for (const auto& [field, value] : cases) {
    json body = body_json("cb", "P", 1, kNow);
    body[field] = value;
    EXPECT_EQ(verify_reason(channel, body), RejectReason::malformed) << field << value.dump();
  }
}

// The body is read in one SAX pass, not as a document; it must read what a document would hold:
// top-level members only, the last of a repeated member, nothing from nested objects or arrays.
TEST(HmacChannel, BodyIsReadLikeAParsedDocument) {
  const auto channel = make_channel();
  const json good = body_json("cb-1", "P-1", 1, kNow);
  const std::string sign = good["sign"];
  const std::string tail =
      ",\"status\":1,\"timestamp\":" + std::to_string(kNow) + ",\"sign\":\"" + sign + "\"}";
  // A repeated member: the last occurrence counts, whatever the earlier ones held.
  for (const std::string& head :
       {std::string(R"({"callbackId":"other","callbackId":"cb-1","paymentNo":"P-1")"),
        std::string(R"({"callbackId":{"x":1},"callbackId":"cb-1","paymentNo":"P-1")"),
        std::string(R"({"callbackId":[1,2],"paymentNo":"P-1","callbackId":"cb-1")")}) {
    const auto result = verify_at(channel, head + tail);
    ASSERT_EQ(reason_of(result), std::nullopt) << head;
    EXPECT_EQ(result.value().callback_id, "cb-1");
  }
  EXPECT_EQ(reason_of(verify_at(channel,
                                R"({"callbackId":"cb-1","callbackId":7,"paymentNo":"P-1")" + tail)),
            RejectReason::malformed);
  // Members of nested objects and arrays are not the callback's own.
  for (const std::string& head :
       {std::string(R"({"nested":{"callbackId":"cb-1"},"paymentNo":"P-1")"),
        std::string(R"({"list":[{"callbackId":"cb-1"}],"paymentNo":"P-1")"),
        std::string(R"({"list":["callbackId","cb-1"],"paymentNo":"P-1")")}) {
    EXPECT_EQ(reason_of(verify_at(channel, head + tail)), RejectReason::malformed) << head;
  }
  // Nesting before and after the members does not move them off the top level.
  const auto nested = verify_at(
      channel, R"({"a":{"b":[{"c":{}}]},"callbackId":"cb-1","z":[[]],"paymentNo":"P-1")" + tail);
  ASSERT_EQ(reason_of(nested), std::nullopt);
  EXPECT_EQ(nested.value().payment_no, "P-1");
  // A document with trailing content is not a body.
  EXPECT_EQ(reason_of(verify_at(channel, good.dump() + "{}")), RejectReason::malformed);
}

TEST(HmacChannel, EmptyIdsAreMalformedEvenWhenSigned) {
  const auto channel = make_channel();
  EXPECT_EQ(verify_reason(channel, body_json("", "P", 1, kNow)), RejectReason::malformed);
  EXPECT_EQ(verify_reason(channel, body_json("cb", "", 1, kNow)), RejectReason::malformed);
}

TEST(HmacChannel, IdsAreLimitedTo128Bytes) {
  const auto channel = make_channel();
  const std::string at_limit(kHmacMaxIdBytes, 'x');
  const std::string over_limit(kHmacMaxIdBytes + 1, 'x');
  EXPECT_EQ(verify_reason(channel, body_json(at_limit, at_limit, 1, kNow)), std::nullopt);
  EXPECT_EQ(verify_reason(channel, body_json(over_limit, "P", 1, kNow)), RejectReason::malformed);
  EXPECT_EQ(verify_reason(channel, body_json("cb", over_limit, 1, kNow)), RejectReason::malformed);
  // The limit counts bytes, not characters: 43 three-byte characters are 129 bytes.
  std::string multibyte;
  for (int i = 0; i < 43; ++i) {
    multibyte += "\xe5\xba\xa7";  // U+5EA7
  }
  EXPECT_EQ(verify_reason(channel, body_json(multibyte, "P", 1, kNow)), RejectReason::malformed);
}

TEST(HmacChannel, ControlCharactersInIdsAreMalformed) {
  // "a\nb" + "c" and "a" + "b\nc" would share one canonical string.
  const auto channel = make_channel();
  EXPECT_EQ(verify_reason(channel, body_json("a\nb", "c", 1, kNow)), RejectReason::malformed);
  EXPECT_EQ(verify_reason(channel, body_json("a", "b\nc", 1, kNow)), RejectReason::malformed);
  EXPECT_EQ(verify_reason(channel, body_json("a\tb", "c", 1, kNow)), RejectReason::malformed);
  EXPECT_EQ(verify_reason(channel, body_json("a", std::string("b\x7f"), 1, kNow)),
            RejectReason::malformed);
}

// ---- Signature shape -----------------------------------------------------------------------

TEST(HmacChannel, NonHexOrWrongLengthSignIsBadSignature) {
  const auto channel = make_channel();
  const json good = body_json("cb", "P", 1, kNow);
  const std::string sign = good["sign"];
  const std::vector<std::string> bad_signs = {
      "",
      sign.substr(0, 63),
      sign + "0",
      sign + sign,
      "g" + sign.substr(1),
      sign.substr(0, 62) + "z9",
      " " + sign.substr(1),
      sign.substr(0, 63) + "\xc3",
      std::string(64, '0'),
  };
  for (const auto& bad : bad_signs) {
    json body = good;
    body["sign"] = bad;
    const auto body_text = body.dump(-1, ' ', false, json::error_handler_t::replace);
    EXPECT_EQ(reason_of(verify_at(channel, body_text)), RejectReason::bad_signature) << bad;
  }
}

// ---- Log safety ----------------------------------------------------------------------------

TEST(HmacChannel, RejectionDetailNeverLeaksSecretsOrSignatures) {
  const std::string second_secret = "rotation-secret-XYZ";
  const auto channel = make_channel({kSecret, second_secret});
  const json good = body_json("cb", "P", 1, kNow);
  const std::string expected_sign = good["sign"];
  std::vector<json> bodies;
  json wrong = body_json("cb", "P", 1, kNow, "attacker-secret");
  bodies.push_back(wrong);
  json tampered = good;
  tampered["paymentNo"] = "P2";
  bodies.push_back(tampered);
  bodies.push_back(body_json("cb", "P", 1, kNow - kWindow - 1));
  bodies.push_back(body_json("cb", "P", 3, kNow));
  json short_sign = good;
  short_sign["sign"] = expected_sign.substr(0, 40);
  bodies.push_back(short_sign);
  json no_id = good;
  no_id.erase("callbackId");
  bodies.push_back(no_id);
  const std::string wrong_sign = wrong["sign"];
  for (const auto& body : bodies) {
    const auto result = verify_at(channel, body.dump());
    ASSERT_FALSE(result.ok()) << body.dump();
    const auto& detail = result.detail();
    EXPECT_FALSE(detail.empty());
    EXPECT_LT(detail.size(), 100U);
    for (const std::string& secret_text :
         {kSecret, second_secret, expected_sign, wrong_sign, expected_sign.substr(0, 16),
          wrong_sign.substr(0, 16), expected_sign.substr(0, 40)}) {
      EXPECT_EQ(detail.find(secret_text), std::string::npos) << detail;
    }
  }
}

// ---- Concurrency ---------------------------------------------------------------------------

TEST(HmacChannel, ConcurrentVerifyFromFourThreads) {
  constexpr int kThreads = 4;
  constexpr int kIterations = 2'000;
  const auto channel = make_channel({"old-secret", kSecret});
  std::vector<std::string> bodies;
  for (int i = 0; i < 16; ++i) {
    const auto secret = i % 2 == 0 ? kSecret : std::string("old-secret");
    bodies.push_back(body_json(numbered("cb-", i), "P", 1 + i % 2, kNow, secret).dump());
  }
  std::atomic<int> verified{0};
  std::atomic<int> signed_right{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIterations; ++i) {
        const auto& body = bodies[static_cast<std::size_t>((i + t) % 16)];
        if (!reason_of(verify_at(channel, body)).has_value()) {
          verified.fetch_add(1, std::memory_order_relaxed);
        }
        if (i % 100 == 0 &&
            channel.sign("cb", "P", 1, kNow) == sign_with("old-secret", "cb", "P", 1, kNow)) {
          signed_right.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(verified.load(), kThreads * kIterations);
  EXPECT_EQ(signed_right.load(), kThreads * (kIterations / 100));
}

// ---- Bodies and digests --------------------------------------------------------------------

TEST(HmacChannel, SignedBodyRoundTripsThroughVerify) {
  const auto channel = make_channel();
  const std::string id = "cb \"quoted\" \\ back/slash \xe5\xba\xa7";
  const std::string payment = "P-2024-\xe2\x82\xac";
  const auto body = channel.signed_body(id, payment, 2, kNow);
  const auto parsed = json::parse(body);
  EXPECT_EQ(parsed["callbackId"], id);
  EXPECT_EQ(parsed["status"], 2);
  EXPECT_EQ(parsed["timestamp"], kNow);
  EXPECT_EQ(parsed["sign"], channel.sign(id, payment, 2, kNow));
  const auto result = verify_at(channel, body);
  ASSERT_TRUE(result.ok());
  const auto& callback = result.value();
  EXPECT_EQ(callback.callback_id, id);
  EXPECT_EQ(callback.payment_no, payment);
  EXPECT_EQ(callback.kind, domain::CallbackKind::failure);
}

std::string digest_of(const HmacChannel& channel, const std::string& id, int status,
                      std::int64_t timestamp) {
  const auto result = verify_at(channel, channel.signed_body(id, "P-77", status, timestamp));
  EXPECT_TRUE(result.ok());
  if (!result.ok()) {
    return {};
  }
  return result.value().payload_sha256;
}

TEST(HmacChannel, PayloadDigestIgnoresTimestampAndSignatureButNotStatus) {
  const auto channel = make_channel();
  const auto first = digest_of(channel, "cb-1", 1, kNow);
  ASSERT_EQ(first.size(), 64U);
  EXPECT_EQ(digest_of(channel, "cb-1", 1, kNow - 1'234), first);
  EXPECT_NE(digest_of(channel, "cb-1", 2, kNow), first);
}

// ---- Small surface -------------------------------------------------------------------------

TEST(HmacChannel, DialectSurface) {
  const auto channel = make_channel();
  EXPECT_EQ(channel.id(), domain::Channel::hmac);
  EXPECT_EQ(channel.ack_body(), "success");
  EXPECT_EQ(channel.content_type(), "text/plain");
  EXPECT_EQ(channel.failure_body("bad signature"), "bad signature");
}

TEST(HmacChannel, RejectsUnusableConfiguration) {
  EXPECT_THROW(HmacChannel(HmacConfig{{}, kWindow}), std::invalid_argument);
  EXPECT_THROW(HmacChannel(HmacConfig{{kSecret, ""}, kWindow}), std::invalid_argument);
  EXPECT_THROW(HmacChannel(HmacConfig{{kSecret}, -1}), std::invalid_argument);
}

TEST(HttpStatus, MapsEveryRejectReason) {
  EXPECT_EQ(http::http_status(RejectReason::malformed), 400);
  EXPECT_EQ(http::http_status(RejectReason::bad_status), 400);
  EXPECT_EQ(http::http_status(RejectReason::bad_signature), 401);
  EXPECT_EQ(http::http_status(RejectReason::stale), 401);
  EXPECT_EQ(http::http_status(RejectReason::unhandled_event), 200);
}

TEST(Registry, FindsByNameAndId) {
  Registry registry;
  EXPECT_EQ(registry.find("hmac"), nullptr);
  EXPECT_EQ(registry.find(domain::Channel::hmac), nullptr);
  registry.add(std::make_unique<HmacChannel>(HmacConfig{{kSecret}, kWindow}));
  const Channel* by_name = registry.find("hmac");
  ASSERT_NE(by_name, nullptr);
  EXPECT_EQ(by_name->id(), domain::Channel::hmac);
  EXPECT_EQ(registry.find(domain::Channel::hmac), by_name);
  EXPECT_EQ(registry.find("alipay"), nullptr);
  EXPECT_EQ(registry.find(domain::Channel::wechat), nullptr);
  EXPECT_EQ(registry.find("HMAC"), nullptr);
  EXPECT_EQ(registry.find("unknown"), nullptr);
  EXPECT_EQ(registry.find(""), nullptr);
}

TEST(Registry, VerifiesThroughTheInterface) {
  Registry registry;
  registry.add(std::make_unique<HmacChannel>(HmacConfig{{kSecret}, kWindow}));
  const Channel* channel = registry.find("hmac");
  ASSERT_NE(channel, nullptr);
  const codec::Headers headers;
  const auto body = body_json("cb", "P", 1, kNow).dump();
  EXPECT_TRUE((channel->verify(InboundRequest{body, &headers, kNow})).ok());
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

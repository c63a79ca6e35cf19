// Unit tests for the timestamped-HMAC core shared by stripe and standard, and its crypto helpers.
#include "channels/timestamped_hmac.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "codec/crypto.hpp"
#include "codec/digest.hpp"
#include "support/rejections.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using seatflow::testing::reason_of;

constexpr std::int64_t kT = 1'700'000'000;
constexpr std::int64_t kNowMs = kT * 1000;

std::string mac_of(std::string_view key, std::string_view text) {
  const std::array<std::string_view, 1> pieces{text};
  return codec::hmac_sha256(key, pieces);
}

TEST(HmacSha256, Rfc4231Case2AndPiecesEqualTheWhole) {
  EXPECT_EQ(codec::to_lower_hex(mac_of("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  const std::array<std::string_view, 3> pieces{"what do ya", " want for ", "nothing?"};
  EXPECT_EQ(codec::hmac_sha256("Jefe", pieces), mac_of("Jefe", "what do ya want for nothing?"));
  EXPECT_THROW((void)mac_of("", "x"), std::invalid_argument);
}

TEST(ConstantTimeEqual, ComparesLengthAndBytes) {
  EXPECT_TRUE(codec::constant_time_equal("abc", "abc"));
  EXPECT_FALSE(codec::constant_time_equal("abc", "abd"));
  EXPECT_FALSE(codec::constant_time_equal("abc", "abcd"));
  EXPECT_TRUE(codec::constant_time_equal("", ""));
}

TEST(HexDecode, EitherCaseEvenLengthOnly) {
  EXPECT_EQ(codec::hex_decode("00ff7F80"), std::string("\x00\xff\x7f\x80", 4));
  EXPECT_EQ(codec::hex_decode(""), std::string());
  EXPECT_EQ(codec::hex_decode("abc"), std::nullopt);
  EXPECT_EQ(codec::hex_decode("zz"), std::nullopt);
  EXPECT_EQ(codec::hex_decode("0g"), std::nullopt);
}

TEST(Base64UnpaddedOk, AcceptsBothFormsAndRefusesImpossibleLengths) {
  EXPECT_EQ(codec::base64_decode_unpadded_ok("YWI=", 16), "ab");
  EXPECT_EQ(codec::base64_decode_unpadded_ok("YWI", 16), "ab");
  EXPECT_EQ(codec::base64_decode_unpadded_ok("YQ", 16), "a");
  EXPECT_EQ(codec::base64_decode_unpadded_ok("YWJj", 16), "abc");
  EXPECT_EQ(codec::base64_decode_unpadded_ok("Y", 16), std::nullopt);
  EXPECT_EQ(codec::base64_decode_unpadded_ok("Y!I", 16), std::nullopt);
  EXPECT_EQ(codec::base64_decode_unpadded_ok("YWJj", 2), std::nullopt);
}

TEST(ParseUnixSeconds, DigitsOnlyAndBounded) {
  EXPECT_EQ(parse_unix_seconds("1614265330"), 1614265330);
  EXPECT_EQ(parse_unix_seconds("0"), 0);
  EXPECT_EQ(parse_unix_seconds(""), std::nullopt);
  EXPECT_EQ(parse_unix_seconds("-1"), std::nullopt);
  EXPECT_EQ(parse_unix_seconds(" 1"), std::nullopt);
  EXPECT_EQ(parse_unix_seconds("1e9"), std::nullopt);
  EXPECT_EQ(parse_unix_seconds(std::string(kUnixSecondsDigitsMax, '9')), 999'999'999'999);
  EXPECT_EQ(parse_unix_seconds(std::string(kUnixSecondsDigitsMax + 1, '1')), std::nullopt);
}

TEST(SplitSignatureEntries, SkipsEmptyEntriesAndStopsAtTheLimit) {
  const auto entries = split_signature_entries("a,,b,", ',');
  ASSERT_TRUE(entries.has_value());
  EXPECT_EQ(*entries, (std::vector<std::string_view>{"a", "b"}));
  std::string at_limit;
  for (std::size_t i = 0; i < kSignatureEntriesMax; ++i) {
    at_limit += "v1,x ";
  }
  ASSERT_TRUE(split_signature_entries(at_limit, ' ').has_value());
  EXPECT_EQ(split_signature_entries(at_limit, ' ')->size(), kSignatureEntriesMax);
  EXPECT_EQ(split_signature_entries(at_limit + "v1,y", ' '), std::nullopt);
  EXPECT_EQ(split_signature_entries(std::string(kSignatureHeaderBytesMax + 1, 'a'), ' '),
            std::nullopt);
}

struct Signed {
  std::array<std::string_view, 1> pieces{"payload"};
  std::vector<std::string> candidates;
};

TEST(TimestampedHmac, AnyCandidateUnderAnyKeyPasses) {
  const TimestampedHmac keys({"old-key", "new-key"}, kWebhookWindowMs);
  Signed s;
  s.candidates = {std::string(32, 'x'), mac_of("new-key", "payload")};
  EXPECT_EQ(reason_of(keys.check({kT, s.pieces, s.candidates}, kNowMs)), std::nullopt);
  s.candidates = {mac_of("old-key", "payload")};
  EXPECT_EQ(reason_of(keys.check({kT, s.pieces, s.candidates}, kNowMs)), std::nullopt);
  EXPECT_EQ(keys.sign(s.pieces), mac_of("old-key", "payload")) << "the first key signs";
  s.candidates = {mac_of("other-key", "payload")};
  const auto wrong = keys.check({kT, s.pieces, s.candidates}, kNowMs);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(errc_of(wrong.error()), RejectReason::bad_signature);
  s.candidates.clear();
  const auto none = keys.check({kT, s.pieces, s.candidates}, kNowMs);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(errc_of(none.error()), RejectReason::bad_signature);
}

TEST(TimestampedHmac, WindowHoldsBothWaysAtExactly300Seconds) {
  const TimestampedHmac keys({"k"}, kWebhookWindowMs);
  Signed s;
  s.candidates = {mac_of("k", "payload")};
  for (const std::int64_t offset_ms : {-300'000, 0, 300'000}) {
    EXPECT_EQ(reason_of(keys.check({kT, s.pieces, s.candidates}, kNowMs + offset_ms)), std::nullopt)
        << offset_ms;
  }
  for (const std::int64_t offset_ms : {-300'001, 300'001, -86'400'000}) {
    const auto stale = keys.check({kT, s.pieces, s.candidates}, kNowMs + offset_ms);
    ASSERT_FALSE(stale.ok()) << offset_ms;
    EXPECT_EQ(errc_of(stale.error()), RejectReason::stale) << offset_ms;
  }
}

// SPEC §14: the MAC first, the window second; the stale rejection carries the skew in ms.
TEST(TimestampedHmac, AnOldForgeryIsBadSignatureAndStaleCarriesTheSkew) {
  const TimestampedHmac keys({"k"}, kWebhookWindowMs);
  Signed s;
  s.candidates = {mac_of("other-key", "payload")};
  for (const std::int64_t offset_ms : {-600'000, 600'000}) {
    const auto forged = keys.check({kT, s.pieces, s.candidates}, kNowMs + offset_ms);
    EXPECT_EQ(testing::reason_of(forged), RejectReason::bad_signature) << offset_ms;
  }
  s.candidates = {mac_of("k", "payload")};
  const auto stale = keys.check({kT, s.pieces, s.candidates}, kNowMs + 600'000);
  EXPECT_EQ(testing::reason_of(stale), RejectReason::stale);
  EXPECT_EQ(testing::skew_ms_of(stale), 600'000);
}

TEST(TimestampedHmac, AWaivedWindowStillChecksTheMac) {
  const TimestampedHmac keys({"k"}, kWebhookWindowMs);
  Signed s;
  s.candidates = {mac_of("k", "payload")};
  const auto day_ms = std::int64_t{86'400'000};
  EXPECT_EQ(reason_of(keys.check({kT, s.pieces, s.candidates}, kNowMs + day_ms, true)),
            std::nullopt);
  s.candidates = {mac_of("other", "payload")};
  const auto wrong = keys.check({kT, s.pieces, s.candidates}, kNowMs + day_ms, true);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(errc_of(wrong.error()), RejectReason::bad_signature);
}

TEST(TimestampedHmac, RefusesUnusableKeys) {
  EXPECT_THROW(TimestampedHmac({}, kWebhookWindowMs), std::invalid_argument);
  EXPECT_THROW(TimestampedHmac({"a", ""}, kWebhookWindowMs), std::invalid_argument);
  EXPECT_THROW(TimestampedHmac({"a"}, -1), std::invalid_argument);
  EXPECT_THROW(TimestampedHmac(std::vector<std::string>(kWebhookSecretsMax + 1, "k"), 1),
               std::invalid_argument);
  EXPECT_EQ(TimestampedHmac(std::vector<std::string>(kWebhookSecretsMax, "k"), 1).key_count(),
            kWebhookSecretsMax);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

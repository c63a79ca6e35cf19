// Unit tests for the SHA-256 helpers and the business-content digest of a verified callback.
#include "codec/digest.hpp"

#include <gtest/gtest.h>

#include <string>

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using domain::CallbackKind;
using domain::VerifiedCallback;

// Fields are assigned from std::string temporaries: GCC 12 reports a false -Wrestrict for
// std::string::operator=(const char*) in these tests.
VerifiedCallback sample() {
  VerifiedCallback callback;
  callback.callback_id = std::string("cb-1");
  callback.payment_no = std::string("P001");
  callback.channel = domain::Channel::hmac;
  callback.kind = CallbackKind::success;
  return callback;
}

TEST(Sha256Hex, KnownVectors) {
  EXPECT_EQ(codec::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(codec::sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Hex, HashesEmbeddedNulBytes) {
  const std::string with_nul("a\0b", 3);
  EXPECT_NE(codec::sha256_hex(with_nul), codec::sha256_hex("a"));
  EXPECT_NE(codec::sha256_hex(with_nul), codec::sha256_hex("ab"));
}

TEST(ToLowerHex, EncodesEveryNibble) {
  const std::string bytes("\x00\x01\x7f\x80\xab\xff", 6);
  EXPECT_EQ(codec::to_lower_hex(bytes), "00017f80abff");
  EXPECT_EQ(codec::to_lower_hex(""), "");
}

TEST(BusinessDigest, PinsTheDocumentedFormat) {
  // Expected values computed with `printf '<canonical>' | sha256sum`; a format change breaks these
  // on purpose, because it would turn every stored payload_sha256 into a false conflict.
  EXPECT_EQ(codec::business_digest(sample()),
            "893aa04de913683bb1a3121d2e7903ed75ba16e5e4c3b1241d67a92ed49bb2ed");
  auto callback = sample();
  callback.kind = CallbackKind::failure;
  callback.amount_cents = 1999;
  callback.channel_trade_no = std::string("T-7788");
  EXPECT_EQ(codec::business_digest(callback),
            "946b6fc6f4d48d0a570b53ee32ad77945871b10566a1e67be8e4caf858f440c2");
}

TEST(BusinessDigest, IsLowercaseHexOfSha256Length) {
  const auto digest = codec::business_digest(sample());
  ASSERT_EQ(digest.size(), 64U);
  EXPECT_EQ(digest.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(BusinessDigest, IgnoresTransportFields) {
  const auto base = codec::business_digest(sample());
  auto other = sample();
  other.callback_id = std::string("cb-2");
  other.channel = domain::Channel::alipay;
  other.payload_sha256 = std::string("whatever");
  EXPECT_EQ(codec::business_digest(other), base);
}

TEST(BusinessDigest, ChangesWithEveryBusinessField) {
  const auto base = codec::business_digest(sample());
  auto payment = sample();
  payment.payment_no = std::string("P002");
  auto failure = sample();
  failure.kind = CallbackKind::failure;
  auto other = sample();
  other.kind = CallbackKind::other;
  auto zero_amount = sample();
  zero_amount.amount_cents = 0;
  auto trade = sample();
  trade.channel_trade_no = std::string("T1");
  for (const auto* changed : {&payment, &failure, &other, &zero_amount, &trade}) {
    EXPECT_NE(codec::business_digest(*changed), base);
  }
  EXPECT_NE(codec::business_digest(failure), codec::business_digest(other));
  auto amount_one = sample();
  amount_one.amount_cents = 1;
  EXPECT_NE(codec::business_digest(amount_one), codec::business_digest(zero_amount));
}

TEST(BusinessDigest, FieldBoundariesAreUnambiguous) {
  auto left = sample();
  left.payment_no = std::string("P1");
  left.channel_trade_no = std::string("23");
  auto right = sample();
  right.payment_no = std::string("P12");
  right.channel_trade_no = std::string("3");
  EXPECT_NE(codec::business_digest(left), codec::business_digest(right));

  // A value that imitates the separators of the next field must not collide either.
  auto forged = sample();
  forged.payment_no = std::string("P001;kind=7:success;amount=1:-;channel_trade_no=0:");
  forged.channel_trade_no = std::string("");
  auto plain = sample();
  plain.payment_no = std::string("P001");
  EXPECT_NE(codec::business_digest(forged), codec::business_digest(plain));

  auto dash_trade = sample();
  dash_trade.channel_trade_no = std::string("-");
  EXPECT_NE(codec::business_digest(dash_trade), codec::business_digest(sample()));
}

TEST(BusinessDigest, NegativeAndLargeAmountsAreDistinct) {
  auto negative = sample();
  negative.amount_cents = -5;
  auto positive = sample();
  positive.amount_cents = 5;
  auto large = sample();
  large.amount_cents = 9'223'372'036'854'775'807;
  EXPECT_NE(codec::business_digest(negative), codec::business_digest(positive));
  EXPECT_NE(codec::business_digest(large), codec::business_digest(positive));
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

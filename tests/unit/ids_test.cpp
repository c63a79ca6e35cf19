// The one id validator: each rule at its edges, and the entry points that use each rule.
#include <gtest/gtest.h>

#include <string>

#include "channels/hmac/hmac_channel.hpp"
#include "codec/text.hpp"
#include "domain/ids.hpp"

namespace seatflow::domain {
namespace {
namespace SEATFLOW_UNITY_ID {

constexpr IdRule kRules[] = {IdRule::api_key, IdRule::gateway_text, IdRule::printable_bytes};

TEST(IdsTest, EveryRuleBoundsTheLength) {
  for (const auto rule : kRules) {
    EXPECT_FALSE(valid_id("", rule));
    EXPECT_TRUE(valid_id(std::string(id_bytes_max, 'a'), rule));
    EXPECT_FALSE(valid_id(std::string(id_bytes_max + 1, 'a'), rule));
  }
  static_assert(codec::kMaxIdBytes == id_bytes_max);
  static_assert(channels::kHmacMaxIdBytes == id_bytes_max);
}

TEST(IdsTest, EveryRuleRefusesControlCharacters) {
  for (const auto rule : kRules) {
    EXPECT_FALSE(valid_id("a\nb", rule));
    EXPECT_FALSE(valid_id(std::string("a\0b", 3), rule));
    EXPECT_FALSE(valid_id("a\x7f", rule));
  }
}

// The API's ids become Redis keys: only [A-Za-z0-9_.:-].
TEST(IdsTest, ApiKeyRuleIsTheStrictAlphabet) {
  EXPECT_TRUE(valid_id("Ord_1.a:b-C", IdRule::api_key));
  EXPECT_FALSE(valid_id("a b", IdRule::api_key));
  EXPECT_FALSE(valid_id("a/b", IdRule::api_key));
  EXPECT_FALSE(valid_id("a{b}", IdRule::api_key));
  EXPECT_FALSE(valid_id("\xc3\xa9", IdRule::api_key));
  EXPECT_TRUE(valid_id("ord_1", IdRule::api_key));
  EXPECT_FALSE(valid_id("ord 1", IdRule::api_key));
  EXPECT_TRUE(valid_id("pay_1", IdRule::api_key));
  EXPECT_FALSE(valid_id("pay#1", IdRule::api_key));
}

// A gateway's ids: any UTF-8 text without controls.
TEST(IdsTest, GatewayTextRuleAsksForUtf8) {
  EXPECT_TRUE(valid_id("a b/{c}#", IdRule::gateway_text));
  EXPECT_TRUE(valid_id("\xc3\xa9", IdRule::gateway_text));
  EXPECT_FALSE(valid_id("\xc3", IdRule::gateway_text));
  EXPECT_FALSE(valid_id("\xff", IdRule::gateway_text));
  EXPECT_TRUE(valid_id("evt 1/\xc3\xa9", IdRule::gateway_text));
  EXPECT_FALSE(valid_id("\xc3(", IdRule::gateway_text));
  EXPECT_TRUE(valid_id("pay 1", IdRule::gateway_text));
  EXPECT_EQ(codec::is_valid_id("\xc3"), false);
  EXPECT_EQ(codec::is_valid_id("a b"), true);
}

// The hmac dialect's ids and the API's search and path values: bytes, not checked for UTF-8.
TEST(IdsTest, PrintableBytesRuleDoesNotAskForUtf8) {
  EXPECT_TRUE(valid_id("\xff\xfe", IdRule::printable_bytes));
  EXPECT_TRUE(valid_id("a b/{c}", IdRule::printable_bytes));
  EXPECT_TRUE(valid_id("\xff", IdRule::printable_bytes));
}

TEST(IdsTest, Utf8IsStrict) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("\xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xc0\x80"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));          // truncated
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::domain

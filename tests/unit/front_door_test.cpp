// The front door's pure parts (SPEC §14): addresses and CIDR ranges, the source behind trusted
// proxies (X-Forwarded-For), and the unverified-traffic token buckets: refill, burst, LRU bound.
#include <gtest/gtest.h>

#include <chrono>

#include "http/rate_limiter.hpp"
#include "http/source.hpp"

namespace seatflow::http {
namespace {
namespace SEATFLOW_UNITY_ID {

using std::chrono::milliseconds;

SourceAddress address(std::string_view text) {
  const auto parsed = parse_address(text);
  EXPECT_TRUE(parsed.has_value()) << text;
  return parsed.value_or(SourceAddress{});
}

std::vector<Cidr> ranges(std::string_view text) {
  const auto parsed = parse_cidr_list(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.ok() ? parsed.value() : std::vector<Cidr>{};
}

TEST(SourceTest, AddressesParseAndPrintInBothFamilies) {
  EXPECT_EQ(to_string(address("192.0.2.7")), "192.0.2.7");
  EXPECT_EQ(to_string(address(" 2001:db8::1 ")), "2001:db8::1");
  EXPECT_EQ(to_string(address("[2001:db8::1]")), "2001:db8::1");
  EXPECT_EQ(address("::ffff:192.0.2.7"), address("192.0.2.7"));  // one form for IPv4
  EXPECT_EQ(address("127.0.0.1"), ipv4_address(0x7f000001));
  for (const auto* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.4:80", "host", "::g"}) {
    EXPECT_FALSE(parse_address(bad).has_value()) << bad;
  }
}

TEST(SourceTest, CidrRangesMatchTheirPrefixOnly) {
  const auto lan = parse_cidr("10.1.0.0/16");
  ASSERT_TRUE(lan.has_value());
  EXPECT_TRUE(lan->contains(address("10.1.255.3")));
  EXPECT_FALSE(lan->contains(address("10.2.0.1")));
  EXPECT_FALSE(lan->contains(address("2001:db8::1")));
  const auto odd = parse_cidr("192.0.2.130/25");  // the host bits are cleared
  ASSERT_TRUE(odd.has_value());
  EXPECT_TRUE(odd->contains(address("192.0.2.200")));
  EXPECT_FALSE(odd->contains(address("192.0.2.127")));
  const auto v6 = parse_cidr("2001:db8::/32");
  ASSERT_TRUE(v6.has_value());
  EXPECT_TRUE(v6->contains(address("2001:db8:ffff::9")));
  EXPECT_FALSE(v6->contains(address("2001:db9::1")));
  const auto one = parse_cidr("198.51.100.4");  // a bare address is a full-length prefix
  ASSERT_TRUE(one.has_value());
  EXPECT_TRUE(one->contains(address("198.51.100.4")));
  EXPECT_FALSE(one->contains(address("198.51.100.5")));
  EXPECT_TRUE(parse_cidr("0.0.0.0/0")->contains(address("203.0.113.1")));
  EXPECT_FALSE(parse_cidr("0.0.0.0/0")->contains(address("2001:db8::1")));
  for (const auto* bad : {"10.0.0.0/33", "2001:db8::/129", "10.0.0.0/", "10.0.0.0/x", "x/8"}) {
    EXPECT_FALSE(parse_cidr(bad).has_value()) << bad;
  }
  const auto refused = parse_cidr_list("10.0.0.0/8, nope");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.detail(), "'nope' is not an address or CIDR range");
  EXPECT_EQ(ranges(" 10.0.0.0/8 ,, 2001:db8::/32 ").size(), 2U);
}

TEST(SourceTest, ForwardedForCountsOnlyBehindTrustedProxies) {
  const auto proxies = ranges("127.0.0.1/32, 10.0.0.0/8, fd00::/8");
  const auto peer = address("127.0.0.1");
  // Not behind a trusted proxy: the header is whatever the client wrote, and ignored.
  EXPECT_EQ(resolve_source(address("198.51.100.9"), "203.0.113.5", proxies),
            address("198.51.100.9"));
  EXPECT_EQ(resolve_source(peer, "203.0.113.5", {}), peer);
  // Behind one: the right-most entry that is not a proxy, whatever the client put left of it.
  EXPECT_EQ(resolve_source(peer, "203.0.113.5", proxies), address("203.0.113.5"));
  EXPECT_EQ(resolve_source(peer, "1.1.1.1, 203.0.113.5, 10.0.0.7", proxies),
            address("203.0.113.5"));
  EXPECT_EQ(resolve_source(peer, "1.1.1.1,2001:db8::5 , fd00::1", proxies), address("2001:db8::5"));
  // No header, or an entry that does not parse: the last trusted hop is the source.
  EXPECT_EQ(resolve_source(peer, "", proxies), peer);
  EXPECT_EQ(resolve_source(peer, "203.0.113.5, garbage", proxies), peer);
  EXPECT_EQ(resolve_source(peer, "203.0.113.5, garbage, 10.0.0.7", proxies), address("10.0.0.7"));
}

TEST(UnverifiedLimiterTest, ABurstIsSpentThenTokensReturnAtTheRate) {
  UnverifiedLimiter limiter({.tokens_per_s = 2, .burst = 3, .sources_max = 8});
  const auto source = address("203.0.113.5");
  const auto other = address("203.0.113.6");
  const auto t0 = UnverifiedLimiter::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_EQ(limiter.refusal(source, t0).retry_after_s, 0U);  // unknown: may go on
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(limiter.refusal(source, t0).retry_after_s, 0U) << i;
    limiter.spend(source, t0);
  }
  EXPECT_EQ(limiter.refusal(source, t0).retry_after_s,
            1U);  // empty: half a second to the next token
  EXPECT_EQ(limiter.refusal(other, t0).retry_after_s, 0U) << "another source is not limited";
  EXPECT_EQ(limiter.refusal(source, t0 + milliseconds(400)).retry_after_s, 1U);
  EXPECT_EQ(limiter.refusal(source, t0 + milliseconds(500)).retry_after_s, 0U);
  limiter.spend(source, t0 + milliseconds(500));
  EXPECT_EQ(limiter.refusal(source, t0 + milliseconds(500)).retry_after_s, 1U);
  // A long pause refills to the burst, never past it.
  const auto later = t0 + std::chrono::hours(1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(limiter.refusal(source, later).retry_after_s, 0U) << i;
    limiter.spend(source, later);
  }
  EXPECT_GT(limiter.refusal(source, later).retry_after_s, 0U);
}

TEST(UnverifiedLimiterTest, RetryAfterIsTheWholeSecondsToTheNextToken) {
  UnverifiedLimiter limiter({.tokens_per_s = 1, .burst = 1, .sources_max = 8});
  const auto source = address("2001:db8::7");
  const auto t0 = UnverifiedLimiter::Clock::time_point{} + std::chrono::hours(1);
  limiter.spend(source, t0);
  EXPECT_EQ(limiter.refusal(source, t0).retry_after_s, 1U);
  limiter.spend(source, t0 + milliseconds(999));  // spent again before it refilled: still empty
  EXPECT_EQ(limiter.refusal(source, t0 + milliseconds(999)).retry_after_s, 1U);
  EXPECT_EQ(limiter.refusal(source, t0 + milliseconds(1999)).retry_after_s, 0U);
}

TEST(UnverifiedLimiterTest, ASourceRefusedMoreThanABurstSinceItsLastTokenIsPersistent) {
  UnverifiedLimiter limiter({.tokens_per_s = 2, .burst = 3, .sources_max = 8});
  const auto source = address("198.51.100.9");
  const auto t0 = UnverifiedLimiter::Clock::time_point{} + std::chrono::hours(1);
  for (int i = 0; i < 3; ++i) {
    limiter.spend(source, t0);
  }
  // The first burst of refusals is answered at once: a client that honours Retry-After sees no
  // more than that.
  for (int i = 0; i < 3; ++i) {
    const auto refused = limiter.refusal(source, t0);
    EXPECT_GT(refused.retry_after_s, 0U) << i;
    EXPECT_FALSE(refused.persistent) << i;
  }
  EXPECT_TRUE(limiter.refusal(source, t0).persistent);
  EXPECT_TRUE(limiter.refusal(source, t0 + milliseconds(100)).persistent);
  // A token back: the count starts again.
  EXPECT_EQ(limiter.refusal(source, t0 + milliseconds(600)).retry_after_s, 0U);
  limiter.spend(source, t0 + milliseconds(600));
  EXPECT_FALSE(limiter.refusal(source, t0 + milliseconds(600)).persistent);
  // Another source is never persistent for this one's refusals.
  EXPECT_FALSE(limiter.refusal(address("198.51.100.10"), t0).persistent);
}

TEST(UnverifiedLimiterTest, TheTableKeepsTheMostRecentlyUsedSources) {
  UnverifiedLimiter limiter({.tokens_per_s = 1, .burst = 1, .sources_max = 3});
  const auto t0 = UnverifiedLimiter::Clock::time_point{} + std::chrono::hours(1);
  const auto a = address("192.0.2.1");
  const auto b = address("192.0.2.2");
  const auto c = address("192.0.2.3");
  const auto d = address("192.0.2.4");
  limiter.spend(a, t0);
  limiter.spend(b, t0);
  limiter.spend(c, t0);
  EXPECT_EQ(limiter.sources(), 3U);
  EXPECT_GT(limiter.refusal(a, t0).retry_after_s,
            0U);         // touching a makes b the least recently used
  limiter.spend(d, t0);  // over the bound: b's bucket is dropped
  EXPECT_EQ(limiter.sources(), 3U);
  EXPECT_EQ(limiter.refusal(b, t0).retry_after_s, 0U)
      << "a dropped source starts again with a full bucket";
  EXPECT_GT(limiter.refusal(a, t0).retry_after_s, 0U);
  EXPECT_GT(limiter.refusal(c, t0).retry_after_s, 0U);
  EXPECT_GT(limiter.refusal(d, t0).retry_after_s, 0U);
  for (std::uint32_t i = 0; i < 1'000; ++i) {
    limiter.spend(ipv4_address(0x0a000000 + i), t0);
  }
  EXPECT_EQ(limiter.sources(), 3U);
}

TEST(VerifiedSourcesTest, KeepsTheMostRecentlyVerifiedSourcesWithinItsBound) {
  VerifiedSources verified(2);
  const auto a = address("192.0.2.1");
  const auto b = address("192.0.2.2");
  const auto c = address("192.0.2.3");
  EXPECT_FALSE(verified.contains(a));
  verified.add(a);
  verified.add(b);
  EXPECT_TRUE(verified.contains(a));
  EXPECT_TRUE(verified.contains(b));
  verified.add(a);  // verified again: b is now the least recently verified
  verified.add(c);  // over the bound: b is dropped
  EXPECT_TRUE(verified.contains(a));
  EXPECT_FALSE(verified.contains(b));
  EXPECT_TRUE(verified.contains(c));
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::http

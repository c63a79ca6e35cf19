// The throttled clock_skew log (SPEC §14): at most one line per interval, whatever the traffic.
#include <gtest/gtest.h>

#include <chrono>

#include "http/clock_skew_log.hpp"

namespace seatflow::http {
namespace {
namespace SEATFLOW_UNITY_ID {

using namespace std::chrono_literals;

TEST(ClockSkewLog, OneLineAMinuteAtMost) {
  ClockSkewLog log;
  const auto start = std::chrono::steady_clock::time_point{} + 1h;
  EXPECT_TRUE(log.note(domain::Channel::hmac, 600'000, start));
  EXPECT_FALSE(log.note(domain::Channel::hmac, 600'000, start + 1s));
  EXPECT_FALSE(log.note(domain::Channel::stripe, -600'000, start + 59'999ms));
  EXPECT_TRUE(log.note(domain::Channel::hmac, 600'000, start + 60s));
  EXPECT_FALSE(log.note(domain::Channel::hmac, 600'000, start + 60s + 1ms));
  EXPECT_TRUE(log.note(domain::Channel::hmac, 600'000, start + 10min));
}

TEST(ClockSkewLog, TheIntervalIsAMinuteByDefaultAndConfigurable) {
  static_assert(kClockSkewLogInterval == 60s);
  ClockSkewLog log(10ms);
  const auto start = std::chrono::steady_clock::time_point{} + 1h;
  EXPECT_TRUE(log.note(domain::Channel::wechat, 1, start));
  EXPECT_FALSE(log.note(domain::Channel::wechat, 1, start + 9ms));
  EXPECT_TRUE(log.note(domain::Channel::wechat, 1, start + 10ms));
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::http

// Unit tests for the engine's scheduler settings (SEATFLOW_SCHEDULER_POLICY,
// SEATFLOW_SCHEDULER_THREADS).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "app/config.hpp"
#include "support/config_settings.hpp"

namespace seatflow::app {
namespace {

using testing::Settings;

ConfigResult load(const Settings& settings) {
  return testing::load_settings(settings);
}

TEST(EngineConfig, SchedulerDefaultsToOneSharingThread) {
  const auto result = load({});
  ASSERT_TRUE(result.config.has_value()) << result.error;
  EXPECT_EQ(result.config->engine.scheduler_policy, "sharing");
  EXPECT_EQ(result.config->engine.scheduler_threads, 1U);
  EXPECT_EQ(result.config->engine.pg_pool_size, 2U);
  EXPECT_EQ(result.config->engine.router.payment.passivate_idle_ms, 5'000U);
  EXPECT_EQ(result.config->http.io_threads, 2U);
}

TEST(EngineConfig, SchedulerPolicyAndThreadsAreRead) {
  const auto result =
      load({{"SEATFLOW_SCHEDULER_POLICY", "stealing"}, {"SEATFLOW_SCHEDULER_THREADS", "2"}});
  ASSERT_TRUE(result.config.has_value()) << result.error;
  EXPECT_EQ(result.config->engine.scheduler_policy, "stealing");
  EXPECT_EQ(result.config->engine.scheduler_threads, 2U);
}

TEST(EngineConfig, UnknownSchedulerPolicyIsNamedInOneLine) {
  const auto result = load({{"SEATFLOW_SCHEDULER_POLICY", "round-robin"}});
  ASSERT_FALSE(result.config.has_value());
  EXPECT_EQ(result.error.rfind("SEATFLOW_SCHEDULER_POLICY", 0), 0U) << result.error;
  EXPECT_NE(result.error.find("round-robin"), std::string::npos) << result.error;
  EXPECT_EQ(result.error.find('\n'), std::string::npos) << result.error;
}

TEST(EngineConfig, SchedulerThreadsOutOfRangeIsRejected) {
  const auto result = load({{"SEATFLOW_SCHEDULER_THREADS", "0"}});
  ASSERT_FALSE(result.config.has_value());
  EXPECT_EQ(result.error.rfind("SEATFLOW_SCHEDULER_THREADS", 0), 0U) << result.error;
}

}  // namespace
}  // namespace seatflow::app

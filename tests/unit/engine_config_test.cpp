// Unit tests for the engine's scheduler settings (SEATFLOW_SCHEDULER_POLICY,
// SEATFLOW_SCHEDULER_THREADS) and its other engine limits.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "app/config.hpp"
#include "support/config_settings.hpp"

namespace seatflow::app {
namespace {
namespace SEATFLOW_UNITY_ID {

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

// The spare payment actors: 0 turns them off; a count beyond the bound is refused.
TEST(EngineConfig, SparePaymentActorsAreReadAndBounded) {
  const auto defaults = load({});
  ASSERT_TRUE(defaults.config.has_value()) << defaults.error;
  EXPECT_EQ(defaults.config->engine.router.spare_payment_actors_max, 4'096U);
  const auto off = load({{"SEATFLOW_SPARE_PAYMENT_ACTORS_MAX", "0"}});
  ASSERT_TRUE(off.config.has_value()) << off.error;
  EXPECT_EQ(off.config->engine.router.spare_payment_actors_max, 0U);
  const auto over = load({{"SEATFLOW_SPARE_PAYMENT_ACTORS_MAX", "1000001"}});
  ASSERT_FALSE(over.config.has_value());
  EXPECT_EQ(over.error.rfind("SEATFLOW_SPARE_PAYMENT_ACTORS_MAX", 0), 0U) << over.error;
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

// The HTTP body limit may not exceed what the dialects read: a larger one would only let bigger
// requests in to be refused after they were read.
TEST(EngineConfig, BodyLimitStopsAtTheLargestGatewayBody) {
  const auto at =
      load({{"SEATFLOW_BODY_BYTES_MAX", std::to_string(channels::kGatewayBodyBytesMax)}});
  ASSERT_TRUE(at.config.has_value()) << at.error;
  EXPECT_EQ(at.config->http.body_bytes_max, channels::kGatewayBodyBytesMax);
  const auto over =
      load({{"SEATFLOW_BODY_BYTES_MAX", std::to_string(channels::kGatewayBodyBytesMax + 1)}});
  ASSERT_FALSE(over.config.has_value());
  EXPECT_EQ(over.error.rfind("SEATFLOW_BODY_BYTES_MAX", 0), 0U) << over.error;
  EXPECT_NE(over.error.find(std::to_string(channels::kGatewayBodyBytesMax)), std::string::npos)
      << over.error;
}

// The batch fill wait: its settings are read, and a fill size a batch can never reach is refused.
TEST(EngineConfig, CommitFillSettingsAreReadAndBoundedByTheBatchSize) {
  const auto read = load(
      {{"SEATFLOW_COMMIT_FILL_CALLBACKS_MIN", "16"}, {"SEATFLOW_COMMIT_FILL_WAIT_US_MAX", "250"}});
  ASSERT_TRUE(read.config.has_value()) << read.error;
  EXPECT_EQ(read.config->engine.batcher.batch_fill_callbacks_min, 16U);
  EXPECT_EQ(read.config->engine.batcher.batch_fill_wait_us_max, 250U);
  const auto over = load(
      {{"SEATFLOW_COMMIT_BATCH_CALLBACKS_MAX", "8"}, {"SEATFLOW_COMMIT_FILL_CALLBACKS_MIN", "9"}});
  ASSERT_FALSE(over.config.has_value());
  EXPECT_EQ(over.error.rfind("SEATFLOW_COMMIT_FILL_CALLBACKS_MIN", 0), 0U) << over.error;
  // A batch size below the default fill size, set alone, takes the fill size down with it.
  const auto small = load({{"SEATFLOW_COMMIT_BATCH_CALLBACKS_MAX", "8"}});
  ASSERT_TRUE(small.config.has_value()) << small.error;
  EXPECT_EQ(small.config->engine.batcher.batch_fill_callbacks_min, 8U);
  const auto too_long = load({{"SEATFLOW_COMMIT_FILL_WAIT_US_MAX", "50001"}});
  ASSERT_FALSE(too_long.config.has_value());
  EXPECT_EQ(too_long.error.rfind("SEATFLOW_COMMIT_FILL_WAIT_US_MAX", 0), 0U) << too_long.error;
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::app

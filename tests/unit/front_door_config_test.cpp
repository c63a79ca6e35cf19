// Unit tests for the front door's settings (SPEC §14): defaults, bounds and refusals.
#include <gtest/gtest.h>

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

// The setting is refused with a line that starts with its name.
void expect_refused(const std::string& name, const std::string& value) {
  const auto result = load({{name, value}});
  EXPECT_FALSE(result.config.has_value()) << name << "=" << value;
  EXPECT_EQ(result.error.rfind(name, 0), 0U) << result.error;
}

TEST(FrontDoorConfig, ConnectionSettingsHaveTheirDefaultsAndBounds) {
  const auto defaults = load({});
  ASSERT_TRUE(defaults.config.has_value()) << defaults.error;
  EXPECT_EQ(defaults.config->http.header_timeout_ms, 10'000U);
  EXPECT_EQ(defaults.config->http.connections_per_source_max, 256U);
  const auto set =
      load({{"SEATFLOW_HEADER_TIMEOUT_MS", "2500"}, {"SEATFLOW_CONNECTIONS_PER_SOURCE_MAX", "8"}});
  ASSERT_TRUE(set.config.has_value()) << set.error;
  EXPECT_EQ(set.config->http.header_timeout_ms, 2'500U);
  EXPECT_EQ(set.config->http.connections_per_source_max, 8U);
  expect_refused("SEATFLOW_HEADER_TIMEOUT_MS", "99");
  expect_refused("SEATFLOW_HEADER_TIMEOUT_MS", "600001");
  expect_refused("SEATFLOW_HEADER_TIMEOUT_MS", "1s");
  expect_refused("SEATFLOW_CONNECTIONS_PER_SOURCE_MAX", "0");
  expect_refused("SEATFLOW_CONNECTIONS_PER_SOURCE_MAX", "1000001");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::app

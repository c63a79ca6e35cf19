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

TEST(FrontDoorConfig, UnverifiedBucketsProxiesAndAllowlistsAreRead) {
  const auto defaults = load({});
  ASSERT_TRUE(defaults.config.has_value()) << defaults.error;
  const auto& door = defaults.config->http.front_door;
  EXPECT_EQ(door.unverified.tokens_per_s, 20U);
  EXPECT_EQ(door.unverified.burst, 100U);
  EXPECT_EQ(door.unverified.sources_max, 65'536U);
  EXPECT_EQ(door.per_proxy.tokens_per_s, 200U);
  EXPECT_EQ(door.per_proxy.burst, 1'000U);
  EXPECT_EQ(door.per_proxy.sources_max, http::kProxyBucketsMax);
  EXPECT_TRUE(door.trusted_proxies.empty());
  for (const auto& allowed : door.allowed_sources) {
    EXPECT_FALSE(allowed.has_value()) << "unset: any source";
  }
  const auto set = load({{"SEATFLOW_UNVERIFIED_TOKENS_PER_S", "5"},
                         {"SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", "7"},
                         {"SEATFLOW_RATE_SOURCES_MAX", "1000"},
                         {"SEATFLOW_UNVERIFIED_PER_PROXY_TOKENS_PER_S", "50"},
                         {"SEATFLOW_UNVERIFIED_PER_PROXY_BURST_TOKENS_MAX", "60"},
                         {"SEATFLOW_TRUSTED_PROXIES", "10.0.0.0/8, fd00::/8"},
                         {"SEATFLOW_WECHAT_ALLOWED_SOURCES", "101.226.103.0/25"},
                         {"SEATFLOW_STANDARD_ALLOWED_SOURCES", "2001:db8::1"}});
  ASSERT_TRUE(set.config.has_value()) << set.error;
  const auto& configured = set.config->http.front_door;
  EXPECT_EQ(configured.unverified.tokens_per_s, 5U);
  EXPECT_EQ(configured.unverified.burst, 7U);
  EXPECT_EQ(configured.unverified.sources_max, 1'000U);
  EXPECT_EQ(configured.per_proxy.tokens_per_s, 50U);
  EXPECT_EQ(configured.per_proxy.burst, 60U);
  EXPECT_EQ(configured.trusted_proxies.size(), 2U);
  const auto& wechat =
      configured.allowed_sources[static_cast<std::size_t>(domain::Channel::wechat)];
  ASSERT_TRUE(wechat.has_value());
  EXPECT_TRUE(http::contains_any(*wechat, *http::parse_address("101.226.103.9")));
  EXPECT_FALSE(http::contains_any(*wechat, *http::parse_address("101.226.103.200")));
  EXPECT_TRUE(
      configured.allowed_sources[static_cast<std::size_t>(domain::Channel::standard)].has_value());
  EXPECT_FALSE(
      configured.allowed_sources[static_cast<std::size_t>(domain::Channel::hmac)].has_value());

  expect_refused("SEATFLOW_UNVERIFIED_TOKENS_PER_S", "0");
  expect_refused("SEATFLOW_UNVERIFIED_TOKENS_PER_S", "2.5");
  expect_refused("SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", "0");
  expect_refused("SEATFLOW_UNVERIFIED_PER_PROXY_TOKENS_PER_S", "0");
  expect_refused("SEATFLOW_UNVERIFIED_PER_PROXY_BURST_TOKENS_MAX", "many");
  expect_refused("SEATFLOW_RATE_SOURCES_MAX", "0");
  expect_refused("SEATFLOW_RATE_SOURCES_MAX", "16777217");
  expect_refused("SEATFLOW_TRUSTED_PROXIES", "10.0.0.0/8, proxy.local");
  expect_refused("SEATFLOW_HMAC_ALLOWED_SOURCES", "10.0.0.0/40");
  expect_refused("SEATFLOW_ALIPAY_ALLOWED_SOURCES", " , ");  // would refuse every source
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::app

// Unit tests for what the prod profile refuses at start-up (fault injection, short API tokens and
// JWT keys) and for the JWT settings.
#include <gtest/gtest.h>

#include "app/config.hpp"
#include "support/config_settings.hpp"

namespace seatflow::app {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::Settings;

const Settings kProd = {{"SEATFLOW_PROFILE", "prod"},
                        {"SEATFLOW_CALLBACK_SECRETS", "prod-rules-test-secret-4f1a"}};

Settings with(Settings settings, const std::string& name, const std::string& value) {
  settings[name] = value;
  return settings;
}

TEST(ProdRules, FailpointsAreRefusedInProdAndAllowedInDev) {
  const auto prod = testing::load_settings(with(kProd, "SEATFLOW_FAILPOINTS", "mark_sold=error"));
  ASSERT_FALSE(prod.config.has_value());
  EXPECT_NE(prod.error.find("SEATFLOW_FAILPOINTS"), std::string::npos) << prod.error;
  const auto dev = testing::load_settings({{"SEATFLOW_FAILPOINTS", "mark_sold=error"}});
  ASSERT_TRUE(dev.config.has_value()) << dev.error;
  EXPECT_EQ(dev.config->failpoints, "mark_sold=error");
}

TEST(ProdRules, ApiTokenUnder32BytesIsRefusedInProd) {
  const auto short_token =
      testing::load_settings(with(kProd, "SEATFLOW_API_TOKEN", std::string(31, 'k')));
  ASSERT_FALSE(short_token.config.has_value());
  EXPECT_NE(short_token.error.find("SEATFLOW_API_TOKEN"), std::string::npos) << short_token.error;
  const auto long_token =
      testing::load_settings(with(kProd, "SEATFLOW_API_TOKEN", std::string(32, 'k')));
  ASSERT_TRUE(long_token.config.has_value()) << long_token.error;
  EXPECT_EQ(long_token.config->api_token.size(), 32U);
  // No token at all stays allowed: prod then serves no API.
  EXPECT_TRUE(testing::load_settings(kProd).config.has_value());
  // Dev keeps accepting short tokens.
  EXPECT_TRUE(testing::load_settings({{"SEATFLOW_API_TOKEN", "short"}}).config.has_value());
}

TEST(ProdRules, JwtKeyIsItsOwnAndLongEnoughInProd) {
  const auto token = std::string(32, 't');
  auto settings = with(with(kProd, "SEATFLOW_API_TOKEN", token), "SEATFLOW_API_JWT_KEY", token);
  auto result = testing::load_settings(settings);
  ASSERT_FALSE(result.config.has_value()) << "the token may not double as the JWT key";
  EXPECT_NE(result.error.find("SEATFLOW_API_JWT_KEY"), std::string::npos) << result.error;
  result = testing::load_settings(with(settings, "SEATFLOW_API_JWT_KEY", std::string(31, 'j')));
  ASSERT_FALSE(result.config.has_value());
  EXPECT_NE(result.error.find("SEATFLOW_API_JWT_KEY"), std::string::npos) << result.error;
  result = testing::load_settings(with(settings, "SEATFLOW_API_JWT_KEY", std::string(32, 'j')));
  ASSERT_TRUE(result.config.has_value()) << result.error;
  EXPECT_EQ(result.config->api_jwt_key, std::string(32, 'j'));
}

TEST(ProdRules, JwtMaxLifetimeIsADurationFromOneSecondToThirtyDays) {
  auto result = testing::load_settings({});
  ASSERT_TRUE(result.config.has_value());
  EXPECT_EQ(result.config->api_jwt_lifetime_ms_max, 3'600'000);
  result = testing::load_settings({{"SEATFLOW_API_JWT_LIFETIME_MAX", "15m"}});
  ASSERT_TRUE(result.config.has_value()) << result.error;
  EXPECT_EQ(result.config->api_jwt_lifetime_ms_max, 900'000);
  for (const char* bad : {"500ms", "31d", "forever", ""}) {
    result = testing::load_settings({{"SEATFLOW_API_JWT_LIFETIME_MAX", bad}});
    EXPECT_FALSE(result.config.has_value()) << bad;
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::app

// Unit tests for the stripe/standard settings (SPEC §11): secrets enable the channels, the prod
// profile's rules, SEATFLOW_CURRENCY and the mock gateway's dialect.
#include <gtest/gtest.h>

#include <string>

#include "app/config.hpp"
#include "support/config_settings.hpp"

namespace seatflow::app {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::Settings;

const std::string kStripeSecret = "whsec_config_test_stripe_secret_1";
const std::string kStandardSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const std::string kProdCallbackSecret = "prod-callback-secret-0123456789";

ConfigResult load(const Settings& settings) {
  return testing::load_settings(settings);
}

Settings prod(Settings settings) {
  settings["SEATFLOW_PROFILE"] = "prod";
  settings["SEATFLOW_CALLBACK_SECRETS"] = kProdCallbackSecret;
  settings["SEATFLOW_API_TOKEN"] =
      "prod-api-token-0123456789abcdef0123";  // prod: at least 32 bytes
  settings["SEATFLOW_MOCK_GATEWAY"] = "off";
  return settings;
}

// The error of a configuration that must not load: one line, naming `setting`, no secret in it.
void expect_error(const Settings& settings, const std::string& setting,
                  const std::string& also = {}) {
  const auto result = load(settings);
  ASSERT_FALSE(result.config.has_value()) << "expected an error naming " << setting;
  EXPECT_NE(result.error.find(setting), std::string::npos) << result.error;
  EXPECT_EQ(result.error.find('\n'), std::string::npos) << result.error;
  EXPECT_NE(result.error.find(also), std::string::npos) << result.error;
  for (const auto& [name, value] : settings) {
    if (name.find("WEBHOOK_SECRETS") != std::string::npos) {
      for (const auto& secret : split_list(value, ',')) {
        EXPECT_EQ(result.error.find(secret), std::string::npos) << "a secret leaked";
      }
    }
  }
}

TEST(WebhookConfig, WithoutSecretsBothChannelsAreDisabled) {
  const auto result = load({});
  ASSERT_TRUE(result.config.has_value()) << result.error;
  EXPECT_FALSE(result.config->stripe.has_value());
  EXPECT_FALSE(result.config->standard.has_value());
  EXPECT_EQ(result.config->currency, "cny");
  EXPECT_EQ(result.config->mock_gateway.channel, domain::Channel::hmac);
  const auto empty =
      load({{"SEATFLOW_STRIPE_WEBHOOK_SECRETS", ""}, {"SEATFLOW_STANDARD_WEBHOOK_SECRETS", ""}});
  ASSERT_TRUE(empty.config.has_value()) << empty.error;
  EXPECT_FALSE(empty.config->stripe.has_value());
  EXPECT_FALSE(empty.config->standard.has_value());
}

TEST(WebhookConfig, CommaSeparatedSecretsEnableTheChannels) {
  const auto result = load({{"SEATFLOW_STRIPE_WEBHOOK_SECRETS", kStripeSecret + " , whsec_next"},
                            {"SEATFLOW_STANDARD_WEBHOOK_SECRETS", kStandardSecret},
                            {"SEATFLOW_CURRENCY", "USD"}});
  ASSERT_TRUE(result.config.has_value()) << result.error;
  ASSERT_TRUE(result.config->stripe.has_value());
  EXPECT_EQ(result.config->stripe->secrets,
            (std::vector<std::string>{kStripeSecret, "whsec_next"}));
  EXPECT_EQ(result.config->stripe->currency, "usd");
  EXPECT_EQ(result.config->stripe->window_ms, result.config->callback_window_ms);
  ASSERT_TRUE(result.config->standard.has_value());
  EXPECT_EQ(result.config->standard->secrets, std::vector<std::string>{kStandardSecret});
  EXPECT_EQ(result.config->currency, "usd");
}

TEST(WebhookConfig, BadSettingsStopStartUpWithoutShowingASecret) {
  expect_error({{"SEATFLOW_STRIPE_WEBHOOK_SECRETS", " , "}}, "SEATFLOW_STRIPE_WEBHOOK_SECRETS",
               "no secret");
  expect_error({{"SEATFLOW_STANDARD_WEBHOOK_SECRETS", kStandardSecret + ",whsec_not*base64"}},
               "SEATFLOW_STANDARD_WEBHOOK_SECRETS", "secret 2");
  std::string nine = "whsec_a";
  for (int i = 0; i < 8; ++i) {
    nine += ",whsec_a";
  }
  expect_error({{"SEATFLOW_STRIPE_WEBHOOK_SECRETS", nine}}, "SEATFLOW_STRIPE_WEBHOOK_SECRETS",
               "more than 8");
  for (const auto* currency : {"yuan", "c1y", "cn", "¥¥¥"}) {
    expect_error({{"SEATFLOW_CURRENCY", currency}}, "SEATFLOW_CURRENCY");
  }
}

TEST(WebhookConfig, ProdRefusesShortSecrets) {
  expect_error(prod({{"SEATFLOW_STRIPE_WEBHOOK_SECRETS", "whsec_short"}}),
               "SEATFLOW_STRIPE_WEBHOOK_SECRETS", "under 16 bytes");
  // 12 decoded bytes: long enough as text, too short as a key.
  expect_error(prod({{"SEATFLOW_STANDARD_WEBHOOK_SECRETS", "whsec_MDEyMzQ1Njc4OWFi"}}),
               "SEATFLOW_STANDARD_WEBHOOK_SECRETS", "under 16 bytes");
  const auto ok = load(prod({{"SEATFLOW_STRIPE_WEBHOOK_SECRETS", kStripeSecret},
                             {"SEATFLOW_STANDARD_WEBHOOK_SECRETS", kStandardSecret}}));
  ASSERT_TRUE(ok.config.has_value()) << ok.error;
  EXPECT_TRUE(ok.config->stripe.has_value());
  EXPECT_TRUE(ok.config->standard.has_value());
}

TEST(WebhookConfig, MockGatewayChannelNeedsItsSecrets) {
  expect_error({{"SEATFLOW_MOCK_GATEWAY_CHANNEL", "stripe"}}, "SEATFLOW_MOCK_GATEWAY_CHANNEL",
               "SEATFLOW_STRIPE_WEBHOOK_SECRETS");
  expect_error({{"SEATFLOW_MOCK_GATEWAY_CHANNEL", "standard"}}, "SEATFLOW_MOCK_GATEWAY_CHANNEL",
               "SEATFLOW_STANDARD_WEBHOOK_SECRETS");
  expect_error({{"SEATFLOW_MOCK_GATEWAY_CHANNEL", "alipay"}}, "SEATFLOW_MOCK_GATEWAY_CHANNEL");
  expect_error({{"SEATFLOW_MOCK_GATEWAY_CHANNEL", "paypal"}}, "SEATFLOW_MOCK_GATEWAY_CHANNEL");
  const auto standard = load({{"SEATFLOW_MOCK_GATEWAY_CHANNEL", "standard"},
                              {"SEATFLOW_STANDARD_WEBHOOK_SECRETS", kStandardSecret}});
  ASSERT_TRUE(standard.config.has_value()) << standard.error;
  EXPECT_EQ(standard.config->mock_gateway.channel, domain::Channel::standard);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::app

// Unit tests for the alipay/wechat settings (SPEC §5, §16): all or nothing, key files checked at
// start.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "app/config.hpp"
#include "support/config_settings.hpp"
#include "support/test_keys.hpp"

namespace seatflow::app {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::Settings;
using testing::test_key;

const std::string kApiV3Key = "0123456789abcdef0123456789ABCDEF";

ConfigResult load(const Settings& settings) {
  return testing::load_settings(settings);
}

Settings alipay_settings() {
  return {{"SEATFLOW_ALIPAY_APP_ID", "2021000000000001"},
          {"SEATFLOW_ALIPAY_PUBLIC_KEY", test_key("alipay").public_pem_path}};
}

Settings wechat_settings() {
  std::string keys = "SERIAL-A=";
  keys += test_key("wechat").public_pem_path;
  keys += ", SERIAL-B=";
  keys += test_key("wechat-next").public_pem_path;
  return {{"SEATFLOW_WECHAT_MCHID", "1900000001"},
          {"SEATFLOW_WECHAT_APIV3_KEY", kApiV3Key},
          {"SEATFLOW_WECHAT_PLATFORM_KEYS", keys}};
}

// The error of a configuration that must not load: one line, naming `setting`.
void expect_error(const Settings& settings, const std::string& setting,
                  const std::string& also = {}) {
  const auto result = load(settings);
  ASSERT_FALSE(result.config.has_value()) << "expected an error naming " << setting;
  EXPECT_EQ(result.error.rfind(setting, 0), 0U) << result.error;
  EXPECT_EQ(result.error.find('\n'), std::string::npos) << result.error;
  EXPECT_NE(result.error.find(also), std::string::npos) << result.error;
  EXPECT_EQ(result.error.find(kApiV3Key), std::string::npos) << "a secret leaked: " << result.error;
}

TEST(GatewayConfig, NothingSetMeansBothChannelsAreDisabled) {
  const auto result = load({});
  ASSERT_TRUE(result.config.has_value()) << result.error;
  EXPECT_FALSE(result.config->alipay.has_value());
  EXPECT_FALSE(result.config->wechat.has_value());
  const auto empty = load({{"SEATFLOW_ALIPAY_APP_ID", ""}, {"SEATFLOW_WECHAT_MCHID", ""}});
  ASSERT_TRUE(empty.config.has_value()) << empty.error;
  EXPECT_FALSE(empty.config->alipay.has_value());
}

TEST(GatewayConfig, CompleteSettingsEnableBothChannels) {
  auto settings = alipay_settings();
  settings.merge(wechat_settings());
  settings["SEATFLOW_ALIPAY_SELLER_ID"] = "2088000000000001";
  const auto result = load(settings);
  ASSERT_TRUE(result.config.has_value()) << result.error;
  ASSERT_TRUE(result.config->alipay.has_value());
  EXPECT_EQ(result.config->alipay->app_id, "2021000000000001");
  EXPECT_EQ(result.config->alipay->seller_id, "2088000000000001");
  ASSERT_TRUE(result.config->wechat.has_value());
  EXPECT_EQ(result.config->wechat->mchid, "1900000001");
  ASSERT_EQ(result.config->wechat->platform_keys.size(), 2U);
  EXPECT_EQ(result.config->wechat->platform_keys[1].serial, "SERIAL-B");
  EXPECT_EQ(result.config->wechat->window_ms, result.config->callback_window_ms);
}

TEST(GatewayConfig, PartialAlipaySettingsNameTheMissingOne) {
  expect_error({{"SEATFLOW_ALIPAY_APP_ID", "2021000000000001"}}, "SEATFLOW_ALIPAY_PUBLIC_KEY");
  expect_error({{"SEATFLOW_ALIPAY_PUBLIC_KEY", test_key("alipay").public_pem_path}},
               "SEATFLOW_ALIPAY_APP_ID");
  expect_error({{"SEATFLOW_ALIPAY_SELLER_ID", "2088000000000001"}}, "SEATFLOW_ALIPAY_APP_ID");
}

TEST(GatewayConfig, BadAlipayKeyFilesStopStartUp) {
  auto settings = alipay_settings();
  settings["SEATFLOW_ALIPAY_PUBLIC_KEY"] = "/nonexistent/alipay_public.pem";
  expect_error(settings, "SEATFLOW_ALIPAY_PUBLIC_KEY", "/nonexistent/alipay_public.pem");
  settings["SEATFLOW_ALIPAY_PUBLIC_KEY"] = testing::write_temp_file("junk.pem", "junk");
  expect_error(settings, "SEATFLOW_ALIPAY_PUBLIC_KEY", "no PEM public key");
  settings["SEATFLOW_ALIPAY_PUBLIC_KEY"] = test_key("alipay").private_pem_path;
  expect_error(settings, "SEATFLOW_ALIPAY_PUBLIC_KEY");
}

TEST(GatewayConfig, PartialWechatSettingsNameTheMissingOne) {
  for (const auto* missing :
       {"SEATFLOW_WECHAT_MCHID", "SEATFLOW_WECHAT_APIV3_KEY", "SEATFLOW_WECHAT_PLATFORM_KEYS"}) {
    auto settings = wechat_settings();
    settings.erase(missing);
    expect_error(settings, missing);
  }
}

TEST(GatewayConfig, BadWechatSettingsStopStartUp) {
  auto short_key = wechat_settings();
  short_key["SEATFLOW_WECHAT_APIV3_KEY"] = "0123456789abcdef0123456789ABCDE";
  expect_error(short_key, "SEATFLOW_WECHAT_APIV3_KEY", "exactly 32 bytes");
  auto no_equals = wechat_settings();
  no_equals["SEATFLOW_WECHAT_PLATFORM_KEYS"] = "SERIAL-A";
  expect_error(no_equals, "SEATFLOW_WECHAT_PLATFORM_KEYS", "serial=pem-path");
  auto bad_path = wechat_settings();
  bad_path["SEATFLOW_WECHAT_PLATFORM_KEYS"] = "SERIAL-A=/nonexistent/wechat.pem";
  expect_error(bad_path, "SEATFLOW_WECHAT_PLATFORM_KEYS", "SERIAL-A");
  auto repeated = wechat_settings();
  repeated["SEATFLOW_WECHAT_PLATFORM_KEYS"] =
      "S=" + test_key("wechat").public_pem_path + ",S=" + test_key("wechat").public_pem_path;
  expect_error(repeated, "SEATFLOW_WECHAT_PLATFORM_KEYS", "repeated");
}

// SPEC §16: the Native orders need the app they are created for, whenever the gateway is set.
TEST(GatewayConfig, TheWechatAppidGoesWithTheWechatGateway) {
  auto settings = wechat_settings();
  settings.merge(
      Settings{{"SEATFLOW_WECHAT_GATEWAY_URL", "https://api.mch.weixin.test"},
               {"SEATFLOW_WECHAT_MERCHANT_KEY", test_key("wechat-query-merchant").private_pem_path},
               {"SEATFLOW_WECHAT_MERCHANT_SERIAL", "3775B6A45ACD588826D15E583A95F5DD"}});
  expect_error(settings, "SEATFLOW_WECHAT_APPID", "SEATFLOW_WECHAT_GATEWAY_URL");
  settings["SEATFLOW_WECHAT_APPID"] = "wx 1";
  expect_error(settings, "SEATFLOW_WECHAT_APPID", "wx8888888888888888");
  settings["SEATFLOW_WECHAT_APPID"] = "wx8888888888888888";
  const auto result = load(settings);
  ASSERT_TRUE(result.config.has_value()) << result.error;
  EXPECT_EQ(result.config->query.wechat_appid, "wx8888888888888888");
  auto alone = wechat_settings();
  alone["SEATFLOW_WECHAT_APPID"] = "wx8888888888888888";
  expect_error(alone, "SEATFLOW_WECHAT_APPID", "needs SEATFLOW_WECHAT_GATEWAY_URL");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::app

// Unit tests for the renamed settings: an old name still sets its setting, is reported in exactly
// one warning line, and loses to the new name when both are set.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "app/config.hpp"
#include "app/setting_names.hpp"
#include "support/config_settings.hpp"

namespace seatflow::app {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::Settings;

// load_settings with the stderr it wrote.
struct Loaded {
  ConfigResult result;
  std::string stderr_text;
};

Loaded load(const Settings& settings) {
  ::testing::internal::CaptureStderr();
  auto result = testing::load_settings(settings);
  return {std::move(result), ::testing::internal::GetCapturedStderr()};
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

TEST(SettingNames, AnOldNameStillSetsItsSettingAndWarnsInOneLine) {
  const auto loaded = load({{"SEATFLOW_MAX_INFLIGHT", "17"}});
  ASSERT_TRUE(loaded.result.config.has_value()) << loaded.result.error;
  EXPECT_EQ(loaded.result.config->http.inflight_callbacks_max, 17U);
  ASSERT_EQ(loaded.result.warnings.size(), 1U);
  const auto& warning = loaded.result.warnings.front();
  EXPECT_NE(warning.find("SEATFLOW_MAX_INFLIGHT "), std::string::npos) << warning;
  EXPECT_NE(warning.find("SEATFLOW_INFLIGHT_CALLBACKS_MAX"), std::string::npos) << warning;
  EXPECT_EQ(warning.find('\n'), std::string::npos) << warning;
  // Written once, as one line.
  EXPECT_EQ(count_of(loaded.stderr_text, "SEATFLOW_MAX_INFLIGHT "), 1U) << loaded.stderr_text;
  EXPECT_EQ(count_of(loaded.stderr_text, "\n"), 1U) << loaded.stderr_text;
}

// The fill size is read twice when it exceeds the batch size; its old name still warns once.
TEST(SettingNames, ASettingReadTwiceWarnsOnce) {
  const auto loaded = load({{"SEATFLOW_COMMIT_BATCH", "8"}, {"SEATFLOW_COMMIT_FILL_MIN", "9"}});
  ASSERT_FALSE(loaded.result.config.has_value());
  EXPECT_EQ(loaded.result.error.rfind("SEATFLOW_COMMIT_FILL_CALLBACKS_MIN", 0), 0U)
      << loaded.result.error;
  EXPECT_EQ(loaded.result.warnings.size(), 2U);
  EXPECT_EQ(count_of(loaded.stderr_text, "SEATFLOW_COMMIT_FILL_MIN "), 1U) << loaded.stderr_text;
  EXPECT_EQ(count_of(loaded.stderr_text, "SEATFLOW_COMMIT_BATCH "), 1U) << loaded.stderr_text;
}

TEST(SettingNames, TheNewNameWinsAndTheWarningSaysSo) {
  const auto loaded =
      load({{"SEATFLOW_PAYMENT_MAILBOX", "5"}, {"SEATFLOW_PAYMENT_MAILBOX_CALLBACKS_MAX", "7"}});
  ASSERT_TRUE(loaded.result.config.has_value()) << loaded.result.error;
  EXPECT_EQ(loaded.result.config->engine.router.payment.mailbox_callbacks_max, 7U);
  ASSERT_EQ(loaded.result.warnings.size(), 1U);
  const auto& warning = loaded.result.warnings.front();
  EXPECT_NE(warning.find("SEATFLOW_PAYMENT_MAILBOX "), std::string::npos) << warning;
  EXPECT_NE(warning.find("SEATFLOW_PAYMENT_MAILBOX_CALLBACKS_MAX wins"), std::string::npos)
      << warning;
  EXPECT_EQ(count_of(loaded.stderr_text, "\n"), 1U) << loaded.stderr_text;
}

TEST(SettingNames, TheNewNamesAloneWarnOfNothing) {
  const auto loaded =
      load({{"SEATFLOW_INFLIGHT_CALLBACKS_MAX", "17"}, {"SEATFLOW_API_JWT_LIFETIME_MAX", "15m"}});
  ASSERT_TRUE(loaded.result.config.has_value()) << loaded.result.error;
  EXPECT_EQ(loaded.result.config->api_jwt_lifetime_ms_max, 900'000);
  EXPECT_TRUE(loaded.result.warnings.empty());
  EXPECT_EQ(loaded.stderr_text, "");
}

// Every old name reaches the reader of its new name: a value no reader takes is refused under
// the new name, with the one warning beside it.
TEST(SettingNames, EveryOldNameReachesItsReader) {
  ASSERT_FALSE(renamed_settings().empty());
  for (const auto& renamed : renamed_settings()) {
    const auto loaded = load({{renamed.old_name, "not-a-value"}});
    EXPECT_FALSE(loaded.result.config.has_value()) << renamed.old_name;
    EXPECT_EQ(loaded.result.error.rfind(renamed.new_name, 0), 0U) << loaded.result.error;
    ASSERT_EQ(loaded.result.warnings.size(), 1U) << renamed.old_name;
    EXPECT_NE(loaded.result.warnings.front().find(renamed.new_name), std::string::npos)
        << loaded.result.warnings.front();
  }
}

// A limit's new name ends in its bound; no name is both an old and a new one, or renamed twice.
TEST(SettingNames, NewNamesEndInTheirBound) {
  std::set<std::string> old_names;
  std::set<std::string> new_names;
  for (const auto& renamed : renamed_settings()) {
    const std::string new_name(renamed.new_name);
    EXPECT_TRUE(new_name.ends_with("_MAX") || new_name.ends_with("_MIN")) << new_name;
    EXPECT_TRUE(old_names.insert(renamed.old_name).second) << renamed.old_name;
    EXPECT_TRUE(new_names.insert(new_name).second) << new_name;
  }
  for (const auto& name : old_names) {
    EXPECT_EQ(new_names.count(name), 0U) << name;
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::app

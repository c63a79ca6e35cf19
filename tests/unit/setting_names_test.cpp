// Unit tests for the renamed settings: an old name still sets its setting, is reported in exactly
// one warning line, and loses to the new name when both are set; the new names carry their unit.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

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

// The settings renamed to carry their unit (a rate per second, a bucket's tokens) or the one
// spelling of KEEPALIVE, each with a value 5 under its old name and 6 under its new one, and the
// field it sets.
struct UnitRename {
  const char* old_name;
  const char* new_name;
  std::uint64_t (*read)(const Config&);
};

const std::vector<UnitRename>& unit_renames() {
  static const std::vector<UnitRename> renames{
      {"SEATFLOW_UNVERIFIED_RATE", "SEATFLOW_UNVERIFIED_TOKENS_PER_S",
       [](const Config& c) -> std::uint64_t { return c.http.front_door.unverified.tokens_per_s; }},
      {"SEATFLOW_UNVERIFIED_BURST", "SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX",
       [](const Config& c) -> std::uint64_t { return c.http.front_door.unverified.burst; }},
      {"SEATFLOW_UNVERIFIED_PER_PROXY_RATE", "SEATFLOW_UNVERIFIED_PER_PROXY_TOKENS_PER_S",
       [](const Config& c) -> std::uint64_t { return c.http.front_door.per_proxy.tokens_per_s; }},
      {"SEATFLOW_UNVERIFIED_PER_PROXY_BURST", "SEATFLOW_UNVERIFIED_PER_PROXY_BURST_TOKENS_MAX",
       [](const Config& c) -> std::uint64_t { return c.http.front_door.per_proxy.burst; }},
      {"SEATFLOW_QUERY_RATE", "SEATFLOW_QUERY_RATE_PER_S",
       [](const Config& c) -> std::uint64_t { return c.engine.query.rate_per_s; }},
      {"SEATFLOW_PG_KEEPALIVES_IDLE_S", "SEATFLOW_PG_KEEPALIVE_IDLE_S",
       [](const Config& c) -> std::uint64_t { return c.engine.store.pg.keepalive_idle_s; }},
      {"SEATFLOW_PG_KEEPALIVES_INTERVAL_S", "SEATFLOW_PG_KEEPALIVE_INTERVAL_S",
       [](const Config& c) -> std::uint64_t { return c.engine.store.pg.keepalive_interval_s; }},
  };
  return renames;
}

TEST(SettingNames, UnitlessOldNamesStillSetTheirSettingAndEachWarnsOnce) {
  Settings settings;
  for (const auto& renamed : unit_renames()) {
    settings[renamed.old_name] = "5";
  }
  const auto loaded = load(settings);
  ASSERT_TRUE(loaded.result.config.has_value()) << loaded.result.error;
  EXPECT_EQ(loaded.result.warnings.size(), unit_renames().size());
  for (const auto& renamed : unit_renames()) {
    EXPECT_EQ(renamed.read(*loaded.result.config), 5U) << renamed.old_name;
    const auto line = std::string(renamed.old_name) + " is the old name of " + renamed.new_name +
                      "; it still works";
    EXPECT_EQ(count_of(loaded.stderr_text, line), 1U) << loaded.stderr_text;
  }
  EXPECT_EQ(count_of(loaded.stderr_text, "\n"), unit_renames().size()) << loaded.stderr_text;
}

TEST(SettingNames, UnitNamesAloneSetTheirSettingWithoutAWarning) {
  Settings settings;
  for (const auto& renamed : unit_renames()) {
    settings[renamed.new_name] = "6";
  }
  const auto loaded = load(settings);
  ASSERT_TRUE(loaded.result.config.has_value()) << loaded.result.error;
  for (const auto& renamed : unit_renames()) {
    EXPECT_EQ(renamed.read(*loaded.result.config), 6U) << renamed.new_name;
  }
  EXPECT_TRUE(loaded.result.warnings.empty());
  EXPECT_EQ(loaded.stderr_text, "");
}

TEST(SettingNames, WithBothNamesSetTheUnitNameWinsAndTheWarningSaysSo) {
  for (const auto& renamed : unit_renames()) {
    const auto loaded = load({{renamed.old_name, "5"}, {renamed.new_name, "6"}});
    ASSERT_TRUE(loaded.result.config.has_value()) << loaded.result.error;
    EXPECT_EQ(renamed.read(*loaded.result.config), 6U) << renamed.new_name;
    ASSERT_EQ(loaded.result.warnings.size(), 1U) << renamed.old_name;
    const auto& warning = loaded.result.warnings.front();
    EXPECT_NE(warning.find(std::string(renamed.new_name) + " wins"), std::string::npos) << warning;
    EXPECT_EQ(count_of(loaded.stderr_text, "\n"), 1U) << loaded.stderr_text;
  }
}

// A new name ends in its unit: a limit in its bound, a rate in _PER_S, a duration in its unit;
// KEEPALIVE has one spelling. No name is both an old and a new one, or renamed twice.
TEST(SettingNames, NewNamesEndInTheirUnitOrBound) {
  std::set<std::string> old_names;
  std::set<std::string> new_names;
  for (const auto& renamed : renamed_settings()) {
    const std::string new_name(renamed.new_name);
    EXPECT_TRUE(new_name.ends_with("_MAX") || new_name.ends_with("_MIN") ||
                new_name.ends_with("_PER_S") || new_name.ends_with("_MS") ||
                new_name.ends_with("_S"))
        << new_name;
    EXPECT_EQ(new_name.find("KEEPALIVES"), std::string::npos) << new_name;
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

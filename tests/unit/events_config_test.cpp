// Unit tests for the event relay and retention settings: defaults, durations, limits, prod rules.
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

TEST(EventsConfigTest, DefaultsRelayOnAndThirtyDayRetention) {
  const auto result = load({});
  ASSERT_TRUE(result.config) << result.error;
  const auto& relay = result.config->engine.event_relay;
  EXPECT_TRUE(relay.enabled);
  EXPECT_EQ(relay.relay.stream, "seatflow:events");
  EXPECT_EQ(relay.relay.stream_maxlen, 1'000'000u);
  EXPECT_EQ(relay.relay.batch, 500u);
  EXPECT_EQ(relay.interval_ms, 200u);
  EXPECT_EQ(relay.busy_interval_ms, 20u);
  EXPECT_EQ(relay.relay.slot, "seatflow_events");
  EXPECT_EQ(relay.relay.sender_timeout_ms, 15'000u);
  const auto& retention = result.config->engine.retention;
  EXPECT_TRUE(retention.enabled);
  EXPECT_EQ(retention.horizon_ms, 30LL * 24 * 3600 * 1000);
}

TEST(EventsConfigTest, DurationsTakeAUnit) {
  EXPECT_EQ(parse_duration_ms("30d"), 30LL * 86'400'000);
  EXPECT_EQ(parse_duration_ms("36h"), 36LL * 3'600'000);
  EXPECT_EQ(parse_duration_ms("15m"), 15LL * 60'000);
  EXPECT_EQ(parse_duration_ms("10s"), 10'000);
  EXPECT_EQ(parse_duration_ms("500ms"), 500);
  EXPECT_FALSE(parse_duration_ms("30"));
  EXPECT_FALSE(parse_duration_ms("d"));
  EXPECT_FALSE(parse_duration_ms("-1d"));
  EXPECT_FALSE(parse_duration_ms("3w"));
  EXPECT_FALSE(parse_duration_ms("99999999999d"));
}

TEST(EventsConfigTest, SettingsAreParsedAndBadValuesNamed) {
  const auto ok = load({{"SEATFLOW_EVENT_RELAY", "off"},
                        {"SEATFLOW_EVENT_STREAM", "test:events"},
                        {"SEATFLOW_EVENT_STREAM_ENTRIES_MAX", "5000"},
                        {"SEATFLOW_EVENT_RELAY_BATCH_EVENTS_MAX", "50"},
                        {"SEATFLOW_EVENT_RELAY_BUSY_INTERVAL_MS", "5"},
                        {"SEATFLOW_EVENT_SLOT", "shop_7_events"},
                        {"SEATFLOW_EVENT_SENDER_TIMEOUT_MS", "4000"},
                        {"SEATFLOW_RETENTION_HORIZON", "10s"},
                        {"SEATFLOW_RETENTION_BATCH_ROWS_MAX", "7"}});
  ASSERT_TRUE(ok.config) << ok.error;
  EXPECT_FALSE(ok.config->engine.event_relay.enabled);
  EXPECT_EQ(ok.config->engine.event_relay.relay.stream, "test:events");
  EXPECT_EQ(ok.config->engine.event_relay.relay.stream_maxlen, 5000u);
  EXPECT_EQ(ok.config->engine.event_relay.relay.batch, 50u);
  EXPECT_EQ(ok.config->engine.event_relay.busy_interval_ms, 5u);
  EXPECT_EQ(ok.config->engine.event_relay.relay.slot, "shop_7_events");
  EXPECT_EQ(ok.config->engine.event_relay.relay.sender_timeout_ms, 4'000u);
  EXPECT_EQ(ok.config->engine.retention.horizon_ms, 10'000);
  EXPECT_EQ(ok.config->engine.retention.batch, 7u);

  for (const auto& [name, value] : Settings{{"SEATFLOW_EVENT_RELAY", "maybe"},
                                            {"SEATFLOW_EVENT_STREAM", ""},
                                            {"SEATFLOW_EVENT_STREAM_ENTRIES_MAX", "10"},
                                            {"SEATFLOW_EVENT_RELAY_BATCH_EVENTS_MAX", "0"},
                                            {"SEATFLOW_EVENT_RELAY_BUSY_INTERVAL_MS", "0"},
                                            {"SEATFLOW_EVENT_SLOT", ""},
                                            {"SEATFLOW_EVENT_SLOT", "Seatflow-Events"},
                                            {"SEATFLOW_EVENT_SLOT", std::string(64, 'a')},
                                            {"SEATFLOW_RETENTION_HORIZON", "30"},
                                            {"SEATFLOW_RETENTION_HORIZON", "500ms"},
                                            {"SEATFLOW_EVENT_SENDER_TIMEOUT_MS", "2999"},
                                            {"SEATFLOW_RETENTION_BATCH_ROWS_MAX", "0"}}) {
    const auto bad = load({{name, value}});
    EXPECT_FALSE(bad.config) << name << "=" << value;
    EXPECT_NE(bad.error.find(name), std::string::npos) << bad.error;
  }
}

// The relay answers the server's keepalives only when it polls, so the stream's sender timeout
// must leave room for several polls.
TEST(EventsConfigTest, TheSenderTimeoutCoversSeveralRelayPolls) {
  const auto slow = load({{"SEATFLOW_EVENT_RELAY_INTERVAL_MS", "6000"}});
  EXPECT_FALSE(slow.config);
  EXPECT_NE(slow.error.find("SEATFLOW_EVENT_SENDER_TIMEOUT_MS"), std::string::npos) << slow.error;
  const auto ok = load({{"SEATFLOW_EVENT_RELAY_INTERVAL_MS", "6000"},
                        {"SEATFLOW_EVENT_SENDER_TIMEOUT_MS", "18000"}});
  ASSERT_TRUE(ok.config) << ok.error;
  EXPECT_EQ(ok.config->engine.event_relay.relay.sender_timeout_ms, 18'000u);
}

TEST(EventsConfigTest, ProdRefusesAHorizonShorterThanTheGatewayRetryWindows) {
  const Settings prod = {{"SEATFLOW_PROFILE", "prod"},
                         {"SEATFLOW_CALLBACK_SECRETS", "a-long-enough-prod-secret"}};
  auto short_horizon = prod;
  short_horizon["SEATFLOW_RETENTION_HORIZON"] = "1d";
  const auto refused = load(short_horizon);
  EXPECT_FALSE(refused.config);
  EXPECT_NE(refused.error.find("SEATFLOW_RETENTION_HORIZON"), std::string::npos);
  auto long_horizon = prod;
  long_horizon["SEATFLOW_RETENTION_HORIZON"] = "3d";
  const auto accepted = load(long_horizon);
  EXPECT_TRUE(accepted.config) << accepted.error;
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::app

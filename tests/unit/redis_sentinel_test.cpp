// Unit tests for the Redis Sentinel settings (SPEC §15): the sentinel list's parsing, the master
// name, the failover timeout and the relay's replica count, and the replies that send the client
// back to the sentinels.
#include <gtest/gtest.h>

#include <string>

#include "app/config.hpp"
#include "persistence/drivers/redis_sentinel.hpp"
#include "support/config_settings.hpp"

namespace seatflow::persistence {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::Settings;

TEST(RedisSentinelTest, ParsesHostPortListsInOrder) {
  const auto parsed = parse_sentinels("127.0.0.1:26379,sentinel-b:26380,[::1]:5000");
  ASSERT_TRUE(parsed.ok()) << parsed.detail();
  const auto& list = parsed.value();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].host, "127.0.0.1");
  EXPECT_EQ(list[0].port, 26379);
  EXPECT_EQ(list[1].host, "sentinel-b");
  EXPECT_EQ(list[1].port, 26380);
  EXPECT_EQ(list[2].host, "::1");
  EXPECT_EQ(list[2].port, 5000);
}

TEST(RedisUrlTest, ParsesTheUrlAndRefusesBadOnesWithoutThePassword) {
  const auto parsed = parse_redis_url("redis://:s3cret-pass@cache.internal:6380/2");
  ASSERT_TRUE(parsed.ok()) << parsed.detail();
  EXPECT_EQ(parsed.value().host, "cache.internal");
  EXPECT_EQ(parsed.value().port, 6380);
  EXPECT_EQ(parsed.value().password, "s3cret-pass");
  EXPECT_EQ(parsed.value().db, 2);
  for (const char* bad : {"http://cache:6379", "redis://:s3cret-pass@cache:0",
                          "redis://:s3cret-pass@cache:6379/x", "redis://:s3cret-pass@"}) {
    const auto refused = parse_redis_url(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error(), errc::bad_setting) << bad;
    EXPECT_EQ(refused.detail().find("s3cret"), std::string::npos) << refused.detail();
  }
}

TEST(RedisSentinelTest, RefusesMalformedEntries) {
  for (const char* bad : {"", "host", "host:", ":26379", "host:0", "host:65536", "host:26379,",
                          "a:1,,b:2", "host:12x", "[]:26379"}) {
    const auto parsed = parse_sentinels(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error(), errc::bad_setting) << bad;
    EXPECT_FALSE(parsed.detail().empty()) << bad;
  }
}

TEST(RedisSentinelTest, RefusesMoreThanTheLimit) {
  std::string list;
  for (std::size_t i = 0; i <= kSentinelsMax; ++i) {
    list += (i == 0 ? "" : ",") + std::string("h:") + std::to_string(26379 + i);
  }
  const auto over = parse_sentinels(list);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.detail().find("more than"), std::string::npos) << over.detail();
  list = list.substr(0, list.rfind(','));
  const auto at_limit = parse_sentinels(list);
  EXPECT_TRUE(at_limit.ok()) << at_limit.detail();
}

TEST(RedisSentinelTest, MasterNamesArePrintableAndBounded) {
  EXPECT_TRUE(valid_master_name("seatflow"));
  EXPECT_TRUE(valid_master_name(std::string(kSentinelMasterNameBytesMax, 'm')));
  EXPECT_FALSE(valid_master_name(""));
  EXPECT_FALSE(valid_master_name("two words"));
  EXPECT_FALSE(valid_master_name("tab\tname"));
  EXPECT_FALSE(valid_master_name(std::string(kSentinelMasterNameBytesMax + 1, 'm')));
}

TEST(RedisSentinelTest, ReadonlyAndMasterdownSendTheClientBackToTheSentinels) {
  EXPECT_TRUE(is_not_primary_reply("READONLY You can't write against a read only replica."));
  EXPECT_TRUE(is_not_primary_reply("MASTERDOWN Link with MASTER is down"));
  EXPECT_FALSE(is_not_primary_reply("NOSCRIPT No matching script"));
  EXPECT_FALSE(is_not_primary_reply("OOM command not allowed"));
}

TEST(RedisSentinelConfigTest, WithoutSentinelsTheUrlIsThePrimaryAndNoReplicaIsAwaited) {
  const auto result = testing::load_settings({{"SEATFLOW_REDIS_URL", "redis://:pw@r1:6380/2"}});
  ASSERT_TRUE(result.config) << result.error;
  const auto endpoint = app::redis_endpoint(*result.config);
  EXPECT_TRUE(endpoint.sentinels.addresses.empty());
  EXPECT_EQ(endpoint.host, "r1");
  EXPECT_EQ(endpoint.port, 6380);
  EXPECT_EQ(endpoint.sentinels.master_name, "seatflow");
  EXPECT_EQ(endpoint.sentinels.failover_timeout_ms, 10'000u);
  EXPECT_EQ(result.config->engine.event_relay.relay.replicas_ack, 0u);
}

TEST(RedisSentinelConfigTest, SentinelsKeepTheUrlsPasswordAndDbAndAwaitOneReplica) {
  const auto result = testing::load_settings({{"SEATFLOW_REDIS_URL", "redis://:pw@r1:6380/2"},
                                              {"SEATFLOW_REDIS_SENTINELS", "s1:26379,s2:26380"},
                                              {"SEATFLOW_REDIS_MASTER_NAME", "tickets"},
                                              {"SEATFLOW_REDIS_FAILOVER_TIMEOUT_MS", "5000"}});
  ASSERT_TRUE(result.config) << result.error;
  const auto endpoint = app::redis_endpoint(*result.config);
  ASSERT_EQ(endpoint.sentinels.addresses.size(), 2u);
  EXPECT_EQ(endpoint.sentinels.addresses[1].host, "s2");
  EXPECT_EQ(endpoint.sentinels.master_name, "tickets");
  EXPECT_EQ(endpoint.sentinels.failover_timeout_ms, 5'000u);
  EXPECT_EQ(endpoint.password, "pw");
  EXPECT_EQ(endpoint.db, 2);
  EXPECT_EQ(result.config->engine.event_relay.relay.replicas_ack, 1u);
}

TEST(RedisSentinelConfigTest, RefusesBadSentinelSettingsNamingTheSetting) {
  const Settings base{{"SEATFLOW_REDIS_URL", "redis://r1"}, {"SEATFLOW_REDIS_SENTINELS", "s:1"}};
  const std::pair<const char*, const char*> cases[] = {
      {"SEATFLOW_REDIS_SENTINELS", "s1"},
      {"SEATFLOW_REDIS_MASTER_NAME", "has space"},
      {"SEATFLOW_REDIS_FAILOVER_TIMEOUT_MS", "999"},
      {"SEATFLOW_REDIS_FAILOVER_TIMEOUT_MS", "600001"},
      {"SEATFLOW_REDIS_REPLICAS_ACK", "17"},
  };
  for (const auto& [name, value] : cases) {
    auto settings = base;
    settings[name] = value;
    const auto result = testing::load_settings(settings);
    EXPECT_FALSE(result.config) << name << "=" << value;
    EXPECT_NE(result.error.find(name), std::string::npos) << result.error;
  }
}

TEST(RedisSentinelConfigTest, TheRelaysWaitMustEndBeforeTheRedisTimeout) {
  auto result = testing::load_settings({{"SEATFLOW_REDIS_URL", "redis://r1"},
                                        {"SEATFLOW_REDIS_SENTINELS", "s:1"},
                                        {"SEATFLOW_REDIS_TIMEOUT_MS", "1000"}});
  EXPECT_FALSE(result.config);
  EXPECT_NE(result.error.find("SEATFLOW_REDIS_TIMEOUT_MS"), std::string::npos) << result.error;
  result = testing::load_settings({{"SEATFLOW_REDIS_URL", "redis://r1"},
                                   {"SEATFLOW_REDIS_SENTINELS", "s:1"},
                                   {"SEATFLOW_REDIS_REPLICAS_ACK", "0"},
                                   {"SEATFLOW_REDIS_TIMEOUT_MS", "1000"}});
  ASSERT_TRUE(result.config) << result.error;
  EXPECT_EQ(result.config->engine.event_relay.relay.replicas_ack, 0u);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::persistence

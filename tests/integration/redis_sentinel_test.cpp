// Redis Sentinel against three real redis-sentinel processes, a primary and a replica on loopback
// (SPEC §15): the client finds the primary through the sentinels, refuses a server whose ROLE is
// not master, follows a failover by itself, drops a connection that answered READONLY; the event
// relay confirms its slot only after WAIT reported its XADDs on a replica.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "http/status.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/jobs/event_relay.hpp"
#include "persistence/stores/callback_store.hpp"
#include "persistence/stores/sql.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/sentinel_setup.hpp"
#include "support/stores.hpp"
#include "support/streams.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using persistence::RedisClient;
using persistence::RelayStatus;

std::string address_of(const testing::RedisServer& server) {
  return "127.0.0.1:" + std::to_string(server.port());
}

TEST(RedisSentinelTest, FindsThePrimaryThroughTheSentinelsAndUsesIt) {
  testing::SentinelSetup setup;
  ASSERT_TRUE(setup.start());
  RedisClient client(setup.endpoint(), 2'000, nullptr);
  const auto set = client.command({"SET", "sentinel-test:k", "v"});
  ASSERT_TRUE(set.ok) << set.error;
  EXPECT_EQ(client.server(), address_of(setup.primary()));
  RedisClient direct(setup.primary().endpoint(), 2'000, nullptr);
  EXPECT_EQ(direct.command({"GET", "sentinel-test:k"}).str, "v");
}

TEST(RedisSentinelTest, ASentinelThatKnowsNoPrimaryIsSkippedForTheNext) {
  testing::SentinelSetup setup;
  ASSERT_TRUE(setup.start());
  auto endpoint = setup.endpoint();
  // A dead sentinel first: the client moves on to the next within the call's bound.
  endpoint.sentinels.addresses.insert(
      endpoint.sentinels.addresses.begin(),
      persistence::SentinelAddress{"127.0.0.1", testing::free_port()});
  RedisClient client(endpoint, 2'000, nullptr);
  EXPECT_TRUE(client.ping());
  EXPECT_EQ(client.server(), address_of(setup.primary()));
  endpoint.sentinels.master_name = "no-such-master";
  RedisClient lost(endpoint, 2'000, nullptr);
  const auto reply = lost.command({"PING"});
  EXPECT_FALSE(reply.ok);
  EXPECT_NE(reply.error.find("knows no primary named no-such-master"), std::string::npos)
      << reply.error;
}

// A sentinel that names a replica (stale, or misconfigured): ROLE refuses the connection.
TEST(RedisSentinelTest, AServerWhoseRoleIsNotMasterIsRefused) {
  testing::SentinelSetup setup;
  ASSERT_TRUE(setup.start());
  const auto monitor = setup.ask_sentinel(0, {"SENTINEL", "MONITOR", "lying", "127.0.0.1",
                                              std::to_string(setup.replica().port()), "1"});
  ASSERT_TRUE(monitor.ok) << monitor.error;
  auto endpoint = setup.endpoint();
  endpoint.sentinels.addresses.resize(1);
  endpoint.sentinels.master_name = "lying";
  RedisClient client(endpoint, 2'000, nullptr);
  const auto reply = client.command({"SET", "sentinel-test:never", "x"});
  EXPECT_FALSE(reply.ok);
  EXPECT_NE(reply.error.find("ROLE of " + address_of(setup.replica()) + " is slave, not master"),
            std::string::npos)
      << reply.error;
  EXPECT_EQ(client.connection_generation(), 0u);
  (void)setup.ask_sentinel(0, {"SENTINEL", "REMOVE", "lying"});
}

// SENTINEL FAILOVER promotes the replica: the client, connected to the old primary, fails at most
// a few calls (the sentinels end its connection, or the demoted server answers READONLY) and then
// writes to the new primary, which holds what was written before.
TEST(RedisSentinelTest, AClientFollowsAFailoverByItself) {
  testing::SentinelSetup setup;
  ASSERT_TRUE(setup.start());
  RedisClient client(setup.endpoint(), 2'000, nullptr);
  ASSERT_TRUE(client.command({"SET", "sentinel-test:before", "1"}).ok);
  ASSERT_EQ(client.command({"WAIT", "1", "2000"}).integer, 1);
  ASSERT_TRUE(setup.fail_over());
  bool written = false;
  for (int i = 0; i < 100 && !written; ++i) {
    written = client.command({"SET", "sentinel-test:after", std::to_string(i)}).ok;
    if (!written) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ASSERT_TRUE(written) << "no write reached the new primary within ~10 s";
  EXPECT_EQ(client.server(), address_of(setup.replica()));
  EXPECT_GE(client.connection_generation(), 2u);
  const auto role = client.command({"ROLE"});
  ASSERT_FALSE(role.elements.empty());
  EXPECT_EQ(role.elements[0].str, "master");
  EXPECT_EQ(client.command({"GET", "sentinel-test:before"}).str, "1");
}

// A server that turned into a replica under an open connection answers READONLY: the client
// drops that connection, so its next call connects (with sentinels: asks them) anew.
TEST(RedisSentinelTest, AReadonlyAnswerDropsTheConnection) {
  testing::RedisServer a;
  testing::RedisServer b;
  ASSERT_TRUE(a.start());
  ASSERT_TRUE(b.start());
  RedisClient client(a.endpoint(), 2'000, nullptr);
  ASSERT_TRUE(client.ping());
  ASSERT_EQ(client.connection_generation(), 1u);
  RedisClient admin(a.endpoint(), 2'000, nullptr);
  ASSERT_TRUE(admin.command({"REPLICAOF", "127.0.0.1", std::to_string(b.port())}).ok);
  const auto refused = client.command({"SET", "sentinel-test:ro", "x"});
  EXPECT_FALSE(refused.ok);
  EXPECT_TRUE(refused.error.starts_with("READONLY")) << refused.error;
  EXPECT_TRUE(client.ping());
  EXPECT_EQ(client.connection_generation(), 2u);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

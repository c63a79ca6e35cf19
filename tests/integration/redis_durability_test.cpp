// The eviction-policy read and the readiness write probe (persistence/drivers/redis_durability.hpp)
// against a redis-server of the test's own, reconfigured at will (the shared test Redis never is):
// each policy, CONFIG forbidden by an ACL, out of memory under noeviction, a read-only replica, and
// a server that is gone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "persistence/drivers/redis.hpp"
#include "persistence/drivers/redis_durability.hpp"
#include "support/redis_server.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using persistence::EvictionPolicy;
using persistence::RedisWriteProbe;

class RedisDurabilityTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.start()); }

  void config(const std::vector<std::string>& argv) {
    const auto reply = admin_.command(argv);
    ASSERT_TRUE(reply.ok) << argv[0] << ": " << reply.error;
  }

  testing::RedisServer server_;
  persistence::RedisClient admin_{server_.endpoint(), 2'000, nullptr};
  persistence::RedisClient engine_{server_.endpoint(), 2'000, nullptr};
};

TEST_F(RedisDurabilityTest, NoevictionIsTheOnlyPolicyThatKeepsEveryKey) {
  const auto fresh = persistence::read_eviction_policy(engine_);
  EXPECT_EQ(fresh.kind, EvictionPolicy::Kind::noeviction) << fresh.detail;
  EXPECT_EQ(fresh.detail, "noeviction");
  for (const std::string policy : {"allkeys-lru", "volatile-lru", "allkeys-lfu", "volatile-lfu",
                                   "allkeys-random", "volatile-random", "volatile-ttl"}) {
    config({"CONFIG", "SET", "maxmemory-policy", policy});
    const auto read = persistence::read_eviction_policy(engine_);
    EXPECT_EQ(read.kind, EvictionPolicy::Kind::evicting) << policy;
    EXPECT_EQ(read.detail, policy);
  }
}

TEST_F(RedisDurabilityTest, ConfigForbiddenIsUnreadableNotNoeviction) {
  config({"ACL", "SETUSER", "default", "-config"});
  const auto read = persistence::read_eviction_policy(engine_);
  config({"ACL", "SETUSER", "default", "+config"});
  EXPECT_EQ(read.kind, EvictionPolicy::Kind::unreadable);
  EXPECT_NE(read.detail.find("NOPERM"), std::string::npos) << read.detail;
}

TEST_F(RedisDurabilityTest, TheWriteProbeSeesOutOfMemoryAndAReadOnlyReplica) {
  const auto writable = persistence::probe_redis_write(engine_, "1");
  EXPECT_EQ(writable.kind, RedisWriteProbe::Kind::writable) << writable.detail;
  const auto ttl = admin_.command({"PTTL", std::string(persistence::kHealthWriteKey)});
  EXPECT_GT(ttl.integer, 0) << "the probe key expires";
  EXPECT_LE(ttl.integer, persistence::kHealthWriteTtlMs);

  config({"CONFIG", "SET", "maxmemory", "1"});
  const auto full = persistence::probe_redis_write(engine_, "2");
  config({"CONFIG", "SET", "maxmemory", "0"});
  EXPECT_EQ(full.kind, RedisWriteProbe::Kind::refused);
  EXPECT_EQ(full.detail.rfind("OOM", 0), 0U) << full.detail;

  config({"REPLICAOF", "127.0.0.1", "1"});
  const auto replica = persistence::probe_redis_write(engine_, "3");
  config({"REPLICAOF", "NO", "ONE"});
  EXPECT_EQ(replica.kind, RedisWriteProbe::Kind::refused);
  EXPECT_EQ(replica.detail.rfind("READONLY", 0), 0U) << replica.detail;

  EXPECT_EQ(persistence::probe_redis_write(engine_, "4").kind, RedisWriteProbe::Kind::writable);
}

TEST_F(RedisDurabilityTest, AServerThatIsGoneIsUnreachable) {
  server_.stop();
  EXPECT_EQ(persistence::read_eviction_policy(engine_).kind, EvictionPolicy::Kind::unreachable);
  EXPECT_EQ(persistence::probe_redis_write(engine_, "x").kind, RedisWriteProbe::Kind::unreachable);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

// Functional tests of SPEC §14 "stores that lie about durability", each on a redis-server of the
// test's own (the shared test Redis is never reconfigured: other tests run beside these): an
// evicting maxmemory-policy stops a prod engine from starting (one line naming the setting) and
// is only warned about in dev; a Redis that refuses writes (out of memory under noeviction, a
// read-only replica) makes /readyz not ready and callbacks 503, and once it takes writes again
// every callback is applied exactly once.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "persistence/drivers/redis.hpp"
#include "support/engine_fixture.hpp"
#include "support/redis_server.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Short probes so a store change shows in /readyz within a second or two.
EnvOverrides durability_env(const RedisServer& redis, const char* profile) {
  return {
      {"SEATFLOW_PROFILE", profile},
      {"SEATFLOW_REDIS_URL", redis.url()},
      {"SEATFLOW_REDIS_TIMEOUT_MS", "1000"},
      {"SEATFLOW_READY_PROBE_INTERVAL_MS", "200"},
      {"SEATFLOW_READY_PROBE_TIMEOUT_MS", "500"},
  };
}

// One command on a fresh connection to the test's own server; the reply must be OK.
void redis_command(const RedisServer& redis, const std::vector<std::string>& argv) {
  persistence::RedisClient client(redis.endpoint(), 2'000, nullptr);
  const auto reply = client.command(argv);
  ASSERT_TRUE(reply.ok) << argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << ": "
                        << reply.error;
}

// Polls /readyz until it answers `status` (8 s at most); the last answer.
Response await_readyz(const TestEngine& engine, int status) {
  const auto deadline = Clock::now() + 8s;
  Response last;
  while (Clock::now() < deadline) {
    last = engine.get("/readyz");
    if (last.status == status) {
      return last;
    }
    std::this_thread::sleep_for(100ms);
  }
  return last;
}

Response resend_until_acked(const TestEngine& engine, const std::string& body) {
  const auto deadline = Clock::now() + 15s;
  Response last;
  while (Clock::now() < deadline) {
    last = engine.notify(body);
    if (last.status == 200) {
      return last;
    }
    std::this_thread::sleep_for(200ms);
  }
  return last;
}

std::vector<std::string> lines_with(const std::string& log, std::string_view needle) {
  std::vector<std::string> found;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) {
      found.push_back(line);
    }
  }
  return found;
}

TEST(RedisDurability, ProdRefusesToStartOnAnEvictingPolicyWithOneLineNamingTheSetting) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  redis_command(redis, {"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"});
  auto env = engine_env(0);
  for (const auto& [name, value] : durability_env(redis, "prod")) {
    env[name] = value;
  }
  const auto run = run_to_exit({"serve"}, env);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  const auto refused = lines_with(run.output, "setting=maxmemory-policy");
  ASSERT_EQ(refused.size(), 1U) << run.output;
  EXPECT_NE(refused[0].find("level=error"), std::string::npos) << refused[0];
  EXPECT_NE(refused[0].find("event=startup_refused"), std::string::npos) << refused[0];
  EXPECT_NE(refused[0].find("value=\"allkeys-lru\" required=noeviction"), std::string::npos)
      << refused[0];
  EXPECT_EQ(run.output.find("event=serving"), std::string::npos) << run.output;
}

TEST(RedisDurability, DevWarnsAboutAnEvictingPolicyAndServes) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  redis_command(redis, {"CONFIG", "SET", "maxmemory-policy", "volatile-lru"});
  TestEngine engine(durability_env(redis, "dev"));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto warned = lines_with(engine.log(), "setting=maxmemory-policy");
  ASSERT_EQ(warned.size(), 1U) << engine.log();
  EXPECT_NE(warned[0].find("level=warning"), std::string::npos) << warned[0];
  EXPECT_NE(warned[0].find("event=redis_evicting_policy"), std::string::npos) << warned[0];
  EXPECT_NE(warned[0].find("value=\"volatile-lru\""), std::string::npos) << warned[0];
  EXPECT_EQ(await_readyz(engine, 200).status, 200);
}

// Prod keeps watching: a policy changed to an evicting one after start makes the engine not ready
// until it is noeviction again.
TEST(RedisDurability, ProdIsNotReadyWhileThePolicyIsChangedToAnEvictingOne) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  TestEngine engine(durability_env(redis, "prod"));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  ASSERT_EQ(await_readyz(engine, 200).status, 200);
  redis_command(redis, {"CONFIG", "SET", "maxmemory-policy", "allkeys-random"});
  const auto evicting = await_readyz(engine, 503);
  EXPECT_EQ(evicting.status, 503);
  EXPECT_NE(evicting.body.find("maxmemory-policy is allkeys-random"), std::string::npos)
      << evicting.body;
  redis_command(redis, {"CONFIG", "SET", "maxmemory-policy", "noeviction"});
  EXPECT_EQ(await_readyz(engine, 200).status, 200);
}

// The red team's finding: Redis out of memory under noeviction answered PING, so /readyz said
// ready while every callback got 503. Now it is not ready, and every callback refused meanwhile is
// applied once when the memory is back.
TEST(RedisDurability, OutOfMemoryIsNotReadyAndEveryCallbackIsAppliedOnceAfterwards) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  Stores stores;
  std::vector<std::string> payments;
  std::vector<std::string> bodies;
  for (int i = 0; i < 3; ++i) {
    const auto n = std::to_string(i);
    payments.push_back(stores.id("pay" + n));
    stores.create_pending(payments.back(), stores.id("ord" + n), stores.id("show" + n), {"A1"});
    bodies.push_back(signed_body(stores.id("cb" + n), payments.back(), 1));
  }
  TestEngine engine(durability_env(redis, "prod"));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  ASSERT_EQ(await_readyz(engine, 200).status, 200);

  redis_command(redis, {"CONFIG", "SET", "maxmemory", "1"});
  const auto full = await_readyz(engine, 503);
  EXPECT_EQ(full.status, 503);
  EXPECT_NE(full.body.find("redis refuses writes: OOM"), std::string::npos) << full.body;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const auto refused = engine.notify(bodies[i]);
    EXPECT_EQ(refused.status, 503) << refused.body << refused.error;
    EXPECT_EQ(stores.payment_status(payments[i]), 0) << "the sale failed, so the move rolled back";
  }

  redis_command(redis, {"CONFIG", "SET", "maxmemory", "0"});
  EXPECT_EQ(await_readyz(engine, 200).status, 200);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    EXPECT_EQ(resend_until_acked(engine, bodies[i]).status, 200);
    EXPECT_EQ(resend_until_acked(engine, bodies[i]).status, 200) << "a copy is a duplicate";
    EXPECT_EQ(stores.payment_status(payments[i]), 1);
    EXPECT_EQ(stores.log_rows_for_payment(payments[i]), 1);
  }
  EXPECT_EQ(engine.callbacks("applied"), 3.0);
}

// A Redis turned into a read-only replica answers PING but refuses every write: not ready.
TEST(RedisDurability, AReadOnlyReplicaIsNotReady) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  TestEngine engine(durability_env(redis, "dev"));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  ASSERT_EQ(await_readyz(engine, 200).status, 200);
  // A master that never answers: the server stays a replica, read-only, until told otherwise.
  redis_command(redis, {"REPLICAOF", "127.0.0.1", "1"});
  const auto replica = await_readyz(engine, 503);
  redis_command(redis, {"REPLICAOF", "NO", "ONE"});
  EXPECT_EQ(replica.status, 503);
  EXPECT_NE(replica.body.find("redis refuses writes: READONLY"), std::string::npos) << replica.body;
  EXPECT_EQ(await_readyz(engine, 200).status, 200);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

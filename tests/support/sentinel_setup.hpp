// Redis Sentinel on loopback for integration tests (SPEC §15): a primary, one replica and three
// sentinels (redis-sentinel) watching them under the master name "seatflow", with small timing
// knobs; every process is the test's own and is stopped by the destructor.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>

#include "persistence/drivers/redis.hpp"
#include "support/redis_server.hpp"

namespace seatflow::testing {

class SentinelSetup {
 public:
  static constexpr std::size_t kSentinels = 3;
  static constexpr const char* kMasterName = "seatflow";

  SentinelSetup();  // picks ports and a directory; nothing runs yet
  ~SentinelSetup();
  SentinelSetup(const SentinelSetup&) = delete;
  SentinelSetup& operator=(const SentinelSetup&) = delete;

  // Starts the primary, the replica (REPLICAOF, linked) and the sentinels, and waits until every
  // sentinel names the primary and knows the replica; false (after a test failure naming the
  // step) when a step did not finish within 30 s.
  [[nodiscard]] bool start();
  // SENTINEL FAILOVER on the first sentinel, then waits until every sentinel names `replica()`'s
  // port as the primary; false when they did not within 30 s.
  [[nodiscard]] bool fail_over();
  // The primary's and the replica's servers as started (the roles swap after fail_over()).
  [[nodiscard]] RedisServer& primary() { return primary_; }
  [[nodiscard]] RedisServer& replica() { return replica_; }
  // The sentinels' addresses, as SEATFLOW_REDIS_SENTINELS would give them.
  [[nodiscard]] persistence::RedisSentinels sentinels() const;
  // An endpoint that finds the primary through the sentinels.
  [[nodiscard]] persistence::RedisEndpoint endpoint() const;
  // One command to sentinel `i`.
  [[nodiscard]] persistence::RedisReply ask_sentinel(std::size_t i,
                                                     const std::vector<std::string>& argv) const;
  // The port sentinel `i` names for the primary (0 when it names none).
  [[nodiscard]] std::uint16_t named_primary_port(std::size_t i) const;

 private:
  [[nodiscard]] bool start_sentinel(std::size_t i);
  [[nodiscard]] bool link_replica();
  [[nodiscard]] bool sentinels_ready();

  RedisServer primary_;
  RedisServer replica_;
  std::string dir_;
  std::array<std::uint16_t, kSentinels> ports_{};
  std::array<pid_t, kSentinels> pids_{};
};

}  // namespace seatflow::testing

// A redis-server of a test's own on a free loopback port, which the test may stop and start again
// (its data survives a stop with save): for tests that take Redis away, which the shared test
// server must never be.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "persistence/drivers/redis.hpp"

namespace seatflow::testing {

class RedisServer {
 public:
  RedisServer();  // picks a port and a directory; not started yet
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // Starts it and waits until it answers PING; false when it did not within 10 s.
  [[nodiscard]] bool start();
  // SHUTDOWN SAVE (the data is loaded again by the next start), then waits for the exit.
  void stop();
  [[nodiscard]] bool running() const { return pid_ > 0; }
  // The server's process (to freeze it with SIGSTOP); -1 when not running.
  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] persistence::RedisEndpoint endpoint() const;
  [[nodiscard]] std::string url() const;

 private:
  std::uint16_t port_ = 0;
  std::string dir_;
  pid_t pid_ = -1;
};

}  // namespace seatflow::testing

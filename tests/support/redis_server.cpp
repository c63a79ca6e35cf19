// fork/exec of redis-server with no persistence but an explicit SHUTDOWN SAVE.
#include "support/redis_server.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "support/process.hpp"

namespace seatflow::testing {

RedisServer::RedisServer() : port_(free_port()) {
  char pattern[] = "/tmp/seatflow-redis-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  EXPECT_NE(made, nullptr) << "mkdtemp failed";
  dir_ = made != nullptr ? made : "/tmp";
}

RedisServer::~RedisServer() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

persistence::RedisEndpoint RedisServer::endpoint() const {
  persistence::RedisEndpoint endpoint;
  endpoint.host = "127.0.0.1";
  endpoint.port = port_;
  return endpoint;
}

std::string RedisServer::url() const {
  return "redis://127.0.0.1:" + std::to_string(port_);
}

bool RedisServer::start() {
  if (running()) {
    return true;
  }
  const std::vector<std::string> args = {"redis-server",
                                         "--port",
                                         std::to_string(port_),
                                         "--bind",
                                         "127.0.0.1",
                                         "--save",
                                         "",
                                         "--appendonly",
                                         "no",
                                         "--dir",
                                         dir_,
                                         "--dbfilename",
                                         "dump.rdb",
                                         "--daemonize",
                                         "no"};
  pid_ = ::fork();
  if (pid_ == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    std::vector<char*> argv;
    for (const auto& arg : args) {
      argv.push_back(const_cast<char*>(arg.c_str()));
    }
    argv.push_back(nullptr);
    ::execvp("redis-server", argv.data());
    _exit(127);
  }
  if (pid_ < 0) {
    return false;
  }
  persistence::RedisClient client(endpoint(), 500, nullptr);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (client.ping()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void RedisServer::stop() {
  if (!running()) {
    return;
  }
  persistence::RedisClient client(endpoint(), 5'000, nullptr);
  (void)client.command({"SHUTDOWN", "SAVE"});  // the connection drops: no reply is expected
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "redis-server on port " << port_ << " did not stop; killing it";
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace seatflow::testing

// fork/exec of redis-sentinel beside two RedisServers; every wait bounded.
#include "support/sentinel_setup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include "support/process.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

// Polls `ready` every 50 ms for at most `seconds`.
bool wait_for(int seconds, const std::function<bool()>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// The value of `key` in a flat key/value array reply ("" when absent).
std::string field(const persistence::RedisReply& pairs, const std::string& key) {
  for (std::size_t i = 0; i + 1 < pairs.elements.size(); i += 2) {
    if (pairs.elements[i].str == key) {
      return pairs.elements[i + 1].str;
    }
  }
  return "";
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace

using SEATFLOW_UNITY_ID::field;
using SEATFLOW_UNITY_ID::wait_for;

SentinelSetup::SentinelSetup() {
  char pattern[] = "/tmp/seatflow-sentinel-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  EXPECT_NE(made, nullptr) << "mkdtemp failed";
  dir_ = made != nullptr ? made : "/tmp";
  for (auto& port : ports_) {
    port = free_port();
  }
  pids_.fill(-1);
}

SentinelSetup::~SentinelSetup() {
  for (auto& pid : pids_) {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

persistence::RedisSentinels SentinelSetup::sentinels() const {
  persistence::RedisSentinels out;
  for (const auto port : ports_) {
    out.addresses.push_back({"127.0.0.1", port});
  }
  out.master_name = kMasterName;
  return out;
}

persistence::RedisEndpoint SentinelSetup::endpoint() const {
  persistence::RedisEndpoint endpoint;
  endpoint.host = "unused.invalid";  // the sentinels name the primary
  endpoint.sentinels = sentinels();
  return endpoint;
}

persistence::RedisReply SentinelSetup::ask_sentinel(std::size_t i,
                                                    const std::vector<std::string>& argv) const {
  persistence::RedisEndpoint at;
  at.port = ports_.at(i);
  persistence::RedisClient client(at, 2'000, nullptr);
  return client.command(argv);
}

std::uint16_t SentinelSetup::named_primary_port(std::size_t i) const {
  const auto reply = ask_sentinel(i, {"SENTINEL", "get-master-addr-by-name", kMasterName});
  if (!reply.ok || reply.elements.size() != 2) {
    return 0;
  }
  return static_cast<std::uint16_t>(std::stoi(reply.elements[1].str));
}

bool SentinelSetup::start_sentinel(std::size_t i) {
  const auto conf = dir_ + "/sentinel-" + std::to_string(i) + ".conf";
  std::ofstream(conf) << "port " << ports_[i] << "\nbind 127.0.0.1\ndaemonize no\ndir " << dir_
                      << "\nsentinel monitor " << kMasterName << " 127.0.0.1 " << primary_.port()
                      << " 2\nsentinel down-after-milliseconds " << kMasterName
                      << " 1000\nsentinel failover-timeout " << kMasterName << " 5000\n";
  pids_[i] = ::fork();
  if (pids_[i] == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    ::execlp("redis-sentinel", "redis-sentinel", conf.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pids_[i] > 0 && wait_for(10, [&] {
           const auto pong = ask_sentinel(i, {"PING"});
           return pong.ok && pong.str == "PONG";
         });
}

bool SentinelSetup::link_replica() {
  persistence::RedisClient replica(replica_.endpoint(), 2'000, nullptr);
  if (!replica.command({"REPLICAOF", "127.0.0.1", std::to_string(primary_.port())}).ok) {
    return false;
  }
  return wait_for(30, [&] {
    const auto info = replica.command({"INFO", "replication"});
    return info.ok && info.str.find("master_link_status:up") != std::string::npos;
  });
}

bool SentinelSetup::sentinels_ready() {
  return wait_for(30, [&] {
    for (std::size_t i = 0; i < kSentinels; ++i) {
      if (named_primary_port(i) != primary_.port()) {
        return false;
      }
      const auto replicas = ask_sentinel(i, {"SENTINEL", "REPLICAS", kMasterName});
      if (!replicas.ok || replicas.elements.size() != 1 ||
          field(replicas.elements[0], "flags") != "slave" ||
          field(replicas.elements[0], "master-link-status") != "ok") {
        return false;
      }
    }
    return true;
  });
}

bool SentinelSetup::start() {
  if (!primary_.start() || !replica_.start()) {
    ADD_FAILURE() << "the primary or the replica did not start";
    return false;
  }
  if (!link_replica()) {
    ADD_FAILURE() << "the replica did not link to the primary within 30 s";
    return false;
  }
  for (std::size_t i = 0; i < kSentinels; ++i) {
    if (!start_sentinel(i)) {
      ADD_FAILURE() << "redis-sentinel " << i << " did not answer PING within 10 s";
      return false;
    }
  }
  if (!sentinels_ready()) {
    ADD_FAILURE() << "the sentinels did not all name the primary and know the replica in 30 s";
    return false;
  }
  return true;
}

bool SentinelSetup::fail_over() {
  const auto reply = ask_sentinel(0, {"SENTINEL", "FAILOVER", kMasterName});
  if (!reply.ok) {
    ADD_FAILURE() << "SENTINEL FAILOVER refused: " << reply.error;
    return false;
  }
  const bool switched = wait_for(30, [&] {
    for (std::size_t i = 0; i < kSentinels; ++i) {
      if (named_primary_port(i) != replica_.port()) {
        return false;
      }
    }
    return true;
  });
  if (!switched) {
    ADD_FAILURE() << "the sentinels did not all name the replica within 30 s of the failover";
  }
  return switched;
}

}  // namespace seatflow::testing

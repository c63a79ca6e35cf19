// The invariants a run must leave behind, checked exactly against PostgreSQL and Redis.
#pragma once

#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "load/client.hpp"
#include "load/plan.hpp"
#include "persistence/drivers/redis.hpp"

namespace seatflow::bench {

struct CheckItem {
  std::string name;
  bool ok = false;
  std::string detail;  // what was found, with a few examples when it failed
};

// Collects the passes and mismatches of one check (of the invariants here, or an oracle of the
// history checker) and turns them into a CheckItem quoting the first few mismatches.
class Tally {
 public:
  explicit Tally(std::string name);
  void pass() { ++passed_; }
  void fail(const std::string& example);
  [[nodiscard]] CheckItem item(const std::string& summary = {}) const;

 private:
  std::string name_;
  std::uint64_t passed_ = 0;
  std::uint64_t failed_ = 0;
  std::vector<std::string> examples_;
};

struct CheckReport {
  std::vector<CheckItem> items;
  [[nodiscard]] bool ok() const;
};

// Every payment and order in its expected state, paid_at exactly on paid payments, one log row
// per callback id with duplicate_count = ACKs − 1, every seat in its expected state and held by
// the right order, exactly the expected open discrepancies, every delivery acknowledged.
// `lenient_duplicates`: duplicate_count only bounded above (requests − 1), for runs in which the
// engine was killed: the duplicate counts it answered from memory and had not flushed are lost.
// `proxy_resends`: a balancer between the load and the engines may send each request up to this
// many times more (HAProxy's retry-on after a response timeout: the first copy may still be
// applied by an engine that was frozen), so the upper bound is requests × (1 + resends) − 1.
[[nodiscard]] CheckReport check_invariants(pqxx::connection& conn, persistence::RedisClient& redis,
                                           const Ids& ids, const Plan& plan, const LoadResult& load,
                                           bool lenient_duplicates = false,
                                           std::uint32_t proxy_resends = 0);

}  // namespace seatflow::bench

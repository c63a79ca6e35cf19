// Server-side counters around a run: PostgreSQL commits, Redis command calls, the engine's memory.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "persistence/drivers/redis.hpp"

namespace seatflow::bench {

struct PgCounters {
  std::int64_t xact_commit = 0;  // pg_stat_database of the current database
  std::int64_t xact_rollback = 0;
  std::int64_t next_xid = 0;  // pg_snapshot_xmax of a fresh snapshot: xids assigned so far
};

// Reads the counters in a transaction of its own (which a later read sees as one commit).
[[nodiscard]] PgCounters read_pg_counters(pqxx::connection& conn);

struct RedisCounters {
  std::map<std::string, std::uint64_t> calls;  // INFO commandstats, by command (lower case)
  std::uint64_t commands_processed = 0;        // INFO stats total_commands_processed
};

[[nodiscard]] std::optional<RedisCounters> read_redis_counters(persistence::RedisClient& redis,
                                                               std::string* why);

// after − before per command, leaving out INFO (the probe's own command).
[[nodiscard]] std::map<std::string, std::uint64_t> calls_delta(const RedisCounters& before,
                                                               const RedisCounters& after);

struct ProcessMemory {
  std::uint64_t vm_hwm_kb = 0;  // peak resident set
  std::uint64_t vm_rss_kb = 0;  // resident set now
};

[[nodiscard]] std::optional<ProcessMemory> read_process_memory(int pid);

// The process that has a TCP socket listening on `port` (IPv4 or IPv6), found through /proc.
// With several (a master and its workers), the lowest pid.
[[nodiscard]] std::optional<int> find_listener_pid(std::uint16_t port);

}  // namespace seatflow::bench

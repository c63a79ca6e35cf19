// The result of one seatflow-bench run, as a human table and as JSON.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "load/check.hpp"
#include "load/client.hpp"
#include "load/probes.hpp"
#include "load/seed.hpp"

namespace seatflow::bench {

struct PgDelta {
  std::int64_t commits = 0;  // xact_commit after − before, minus the probe's own commit
  std::int64_t rollbacks = 0;
  std::int64_t xids = 0;  // transaction ids assigned meanwhile (write transactions)
};

struct RedisDelta {
  std::map<std::string, std::uint64_t> calls;  // by command, INFO excluded
  std::uint64_t total_calls = 0;  // every command, those run inside Lua scripts included
  // Commands sent by clients: total_calls without HGET/HSET/HDEL, which only the seat scripts
  // issue during a run (commandstats counts a script's inner calls too).
  std::uint64_t requests = 0;
  std::uint64_t commands_processed = 0;  // total_commands_processed delta, INFO excluded
};

struct RunReport {
  std::string scenario;
  std::string target;
  std::string url;
  std::string run_prefix;
  std::uint32_t payments = 0;
  std::uint32_t duplicates = 0;
  std::uint32_t connections = 0;
  double rate_per_s = 0;
  std::uint64_t distinct_callbacks = 0;
  std::uint64_t prefill_rows = 0;
  std::optional<SeedReport> seed;
  std::optional<SeedReport> prefill;
  LoadResult load;
  std::optional<PgDelta> pg;
  std::optional<RedisDelta> redis;
  int engine_pid = 0;
  std::optional<ProcessMemory> engine_memory;
  std::optional<CheckReport> checks;
  std::string error;  // a failure outside the load (seeding, probes), if any

  // The run counts as passed: load finished, every delivery ACKed, checks (if run) passed.
  [[nodiscard]] bool ok() const;
};

// Nearest-rank percentile of ascending samples, in milliseconds (0 when empty).
[[nodiscard]] double percentile_ms(const std::vector<std::uint32_t>& sorted_us, double pct);

[[nodiscard]] nlohmann::json to_json(const RunReport& report);
void print_table(const RunReport& report, std::FILE* out);

}  // namespace seatflow::bench

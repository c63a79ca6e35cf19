// Fast seeding for seatflow-bench: COPY into PostgreSQL, pipelined HSET into Redis.
#pragma once

#include <cstdint>
#include <pqxx/pqxx>
#include <string>

#include "load/plan.hpp"
#include "persistence/redis.hpp"

namespace seatflow::bench {

struct SeedReport {
  double seconds = 0;
  std::uint64_t rows = 0;   // PostgreSQL rows written
  std::uint64_t seats = 0;  // Redis seat fields written
};

// Orders and payments of the plan (COPY, one transaction), then their locked seats (HSET,
// pipelined). Throws on any database error; Redis errors come back as std::runtime_error.
[[nodiscard]] SeedReport seed_plan(pqxx::connection& conn, persistence::RedisClient& redis,
                                   const Ids& ids, const Plan& plan);

// `rows` completed orders, payments and callback log rows under their own prefix, so that the
// measured run meets tables of realistic size. COPY in bounded chunks, one transaction each.
[[nodiscard]] SeedReport prefill(pqxx::connection& conn, const std::string& prefix,
                                 std::uint32_t rows);

// VACUUM ANALYZE of the three tables a callback touches: fresh rows get hint bits and statistics
// before the clock starts, as long-lived rows would have.
void vacuum_analyze(pqxx::connection& conn);

}  // namespace seatflow::bench

// Fast seeding for seatflow-bench: COPY into PostgreSQL, pipelined HSET into Redis.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "load/plan.hpp"
#include "persistence/drivers/redis.hpp"

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

// The engine's relay decodes every WAL record (a seed's and a prefill's bulk load too, though
// they carry no event): a run that starts before the relay's walsender is through would charge
// that decoding to the callbacks and share the CPU with it. Waits until the event slot `slot`
// has confirmed the WAL written so far, when a walsender streams it (no engine: no wait), for at
// most `limit`. The seconds waited; nullopt when the slot was not caught up by then.
[[nodiscard]] std::optional<double> await_event_slot(pqxx::connection& conn,
                                                     const std::string& slot,
                                                     std::chrono::seconds limit);

}  // namespace seatflow::bench

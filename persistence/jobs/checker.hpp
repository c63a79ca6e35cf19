// `seatflow check`: verifies the invariants between PostgreSQL and the Redis seat hashes against a
// live database, streaming in bounded batches, and reports each violation as it is found.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <pqxx/pqxx>

#include "persistence/drivers/errc.hpp"
#include "persistence/drivers/redis.hpp"

namespace seatflow::persistence {

struct Violation {
  std::string kind;     // e.g. paid_seat_not_sold, seat_sold_twice, illegal_status_pair
  std::string subject;  // the order, payment, callback or seat concerned
  std::string detail;   // what was found
};

struct CheckOptions {
  std::size_t batch = 500;  // orders per batch; Redis SCAN/HSCAN count hint
  // Violations reported per set-based SQL check (the list is cut there; the count says so).
  std::size_t max_per_query = 10'000;
  // Only orders/payments/shows whose id starts with this (targeted checks, tests); empty = all.
  std::string scope_prefix;
};

struct CheckSummary {
  std::uint64_t orders = 0;       // orders checked
  std::uint64_t seat_fields = 0;  // Redis seat fields checked
  std::uint64_t violations = 0;
  std::map<std::string, std::uint64_t> by_kind;
};

using ViolationSink = std::function<void(const Violation&)>;

// Runs every check. A store that fails is errc::redis_unavailable or errc::pg_unavailable, the
// detail saying what failed (the violations reported before it stand).
[[nodiscard]] Result<CheckSummary> check_invariants(pqxx::connection& conn, RedisClient& redis,
                                                    const CheckOptions& options,
                                                    const ViolationSink& sink);

}  // namespace seatflow::persistence

// Reads a whole Redis Stream (the payment-event stream) for assertions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "persistence/drivers/redis.hpp"

namespace seatflow::testing {

struct StreamEntry {
  std::string stream_id;
  std::map<std::string, std::string> fields;
};

// XRANGE stream - +: every entry in order; a failed command fails the calling test.
[[nodiscard]] std::vector<StreamEntry> read_stream(persistence::RedisClient& redis,
                                                   const std::string& stream);

}  // namespace seatflow::testing

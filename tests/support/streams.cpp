// Reads a whole Redis Stream for assertions.
#include "support/streams.hpp"

#include <gtest/gtest.h>

namespace seatflow::testing {

std::vector<StreamEntry> read_stream(persistence::RedisClient& redis, const std::string& stream) {
  const auto reply = redis.command({"XRANGE", stream, "-", "+"});
  EXPECT_TRUE(reply.ok) << reply.error;
  std::vector<StreamEntry> out;
  for (const auto& entry : reply.elements) {
    StreamEntry e{entry.elements[0].str, {}};
    const auto& fields = entry.elements[1].elements;
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
      e.fields[fields[i].str] = fields[i + 1].str;
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace seatflow::testing

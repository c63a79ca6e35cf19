// `seatflow events tail`: the example consumer of the payment-event stream; prints each entry as
// one JSON line (its fields plus its stream id) until stopped, a count is reached, or (--once) the
// stream has nothing more.
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "persistence/drivers/redis.hpp"

namespace seatflow::app {

struct TailOptions {
  std::string stream = "seatflow:events";
  std::string from = "0";          // start after this stream id; "0" = the whole retained stream
  std::size_t count = 0;           // stop after this many entries; 0 = no limit
  bool once = false;               // stop when the stream has nothing more to give right now
  std::uint32_t block_ms = 1'000;  // one XREAD waits at most this long, then the stop flag is read
};

// Reads with XREAD from `endpoint`; returns the process exit code (0, or 1 when Redis fails with
// --once). Redis errors otherwise are reported on `err` and retried every second until `stop`.
[[nodiscard]] int run_events_tail(const TailOptions& options,
                                  const persistence::RedisEndpoint& endpoint,
                                  const std::atomic<bool>& stop, std::ostream& out,
                                  std::ostream& err);

}  // namespace seatflow::app

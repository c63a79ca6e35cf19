// The wall clock, read at the edges (actors, the HTTP front) and passed inward as a value: the
// dialects and the state machines take `now_ms` as an argument and never read a clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace seatflow::domain {

// Milliseconds since the Unix epoch.
[[nodiscard]] inline std::int64_t unix_time_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace seatflow::domain

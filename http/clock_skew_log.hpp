// A wrong clock made visible (SPEC §14): a notify whose signature verified but whose timestamp is
// outside the freshness window is logged, at most once a minute, with the skew seen.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

#include "domain/types.hpp"

namespace seatflow::http {

// At most this often a clock_skew line (the others of the interval are counted in `suppressed`).
inline constexpr std::chrono::milliseconds kClockSkewLogInterval{60'000};

// Thread-safe: every I/O thread's stale notifies go through one object (a mutex taken only for a
// stale notify, which a working clock never sees).
class ClockSkewLog {
 public:
  explicit ClockSkewLog(std::chrono::milliseconds interval = kClockSkewLogInterval)
      : interval_(interval) {}

  // Counts one stale notify of `channel` with `skew_ms` (the engine's clock minus the signed
  // timestamp) seen at `now`; writes `event=clock_skew` when no line was written in the last
  // interval. True when it wrote.
  bool note(domain::Channel channel, std::int64_t skew_ms,
            std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

 private:
  std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::optional<std::chrono::steady_clock::time_point> last_written_;
  std::uint64_t suppressed_ = 0;  // stale notifies since the last line, not written
};

}  // namespace seatflow::http

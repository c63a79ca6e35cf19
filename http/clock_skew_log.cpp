// The throttled clock_skew line: the first stale notify of each interval is written with its skew
// and how many were left unwritten since the line before.
#include "http/clock_skew_log.hpp"

#include "http/log.hpp"

namespace seatflow::http {

bool ClockSkewLog::note(domain::Channel channel, std::int64_t skew_ms,
                        std::chrono::steady_clock::time_point now) {
  std::uint64_t suppressed = 0;
  {
    const std::lock_guard lock(mutex_);
    if (last_written_ && now - *last_written_ < interval_) {
      ++suppressed_;
      return false;
    }
    last_written_ = now;
    suppressed = suppressed_;
    suppressed_ = 0;
  }
  logger().warn(
      "event=clock_skew channel={} skew_ms={} suppressed={} message=\"a notify's signature "
      "verified but its timestamp is outside the window (answered 401, counted as stale): the "
      "engine's clock or the gateway's is wrong, or an old message was replayed\"",
      domain::to_string(channel), skew_ms, suppressed);
  return true;
}

}  // namespace seatflow::http

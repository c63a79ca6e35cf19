// A token bucket per channel: how many gateway calls an actor may make now
// (SEATFLOW_QUERY_RATE_PER_S per channel), refilled by the time that passed. Owned by one actor;
// not thread-safe.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>

#include "domain/types.hpp"

namespace seatflow::actors {

class ChannelTokens {
 public:
  // `rate_per_s` tokens come back each second; a bucket holds at most `capacity` (at least one
  // second's worth, and at least what one take asks for) and starts full.
  ChannelTokens(double rate_per_s, double capacity)
      : rate_(rate_per_s), capacity_(capacity), refilled_(std::chrono::steady_clock::now()) {
    tokens_.fill(capacity_);
  }

  // Adds the tokens of the time since the last refill to every channel's bucket.
  void refill() {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - refilled_).count();
    refilled_ = now;
    for (auto& tokens : tokens_) {
      tokens = std::min(capacity_, tokens + seconds * rate_);
    }
  }
  // Takes `count` tokens of the channel's bucket; false (nothing taken) when it holds fewer.
  [[nodiscard]] bool take(domain::Channel channel, double count) {
    auto& tokens = tokens_[static_cast<std::size_t>(channel)];
    if (tokens < count) {
      return false;
    }
    tokens -= count;
    return true;
  }

 private:
  double rate_;
  double capacity_;
  std::array<double, domain::kChannelCount> tokens_{};
  std::chrono::steady_clock::time_point refilled_;
};

}  // namespace seatflow::actors

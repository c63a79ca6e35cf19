// Token buckets in an LRU table under one mutex (see rate_limiter.hpp).
#include "http/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace seatflow::http {

UnverifiedLimiter::UnverifiedLimiter(RateSettings settings) : settings_(settings) {
  settings_.tokens_per_s = std::max<std::uint32_t>(1, settings_.tokens_per_s);
  settings_.burst = std::max<std::uint32_t>(1, settings_.burst);
  settings_.sources_max = std::max<std::size_t>(1, settings_.sources_max);
  index_.reserve(settings_.sources_max);
}

void UnverifiedLimiter::refill(Bucket& bucket, Clock::time_point now) const {
  if (now <= bucket.updated) {
    return;
  }
  const std::chrono::duration<double> elapsed = now - bucket.updated;
  bucket.tokens = std::min(static_cast<double>(settings_.burst),
                           bucket.tokens + elapsed.count() * settings_.tokens_per_s);
  bucket.updated = now;
}

Refusal UnverifiedLimiter::refusal(const SourceAddress& source, Clock::time_point now) {
  const std::lock_guard lock(mutex_);
  const auto found = index_.find(source);
  if (found == index_.end()) {
    return {};
  }
  auto& bucket = *found->second;
  refill(bucket, now);
  lru_.splice(lru_.begin(), lru_, found->second);
  if (bucket.tokens >= 1.0) {
    bucket.refused = 0;
    return {};
  }
  bucket.refused = std::min(bucket.refused + 1, settings_.burst + 1);
  const double wait_s = (1.0 - bucket.tokens) / settings_.tokens_per_s;
  return {std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::ceil(wait_s))),
          bucket.refused > settings_.burst};
}

void UnverifiedLimiter::spend(const SourceAddress& source, Clock::time_point now) {
  const std::lock_guard lock(mutex_);
  auto found = index_.find(source);
  if (found == index_.end()) {
    if (index_.size() >= settings_.sources_max) {
      // The least recently used bucket's node is reused for the new source.
      index_.erase(lru_.back().source);
      lru_.splice(lru_.begin(), lru_, std::prev(lru_.end()));
      lru_.front() = Bucket{source, static_cast<double>(settings_.burst), now};
    } else {
      lru_.push_front(Bucket{source, static_cast<double>(settings_.burst), now});
    }
    found = index_.emplace(source, lru_.begin()).first;
  } else {
    lru_.splice(lru_.begin(), lru_, found->second);
  }
  auto& bucket = *found->second;
  refill(bucket, now);
  bucket.tokens = std::max(0.0, bucket.tokens - 1.0);
}

std::size_t UnverifiedLimiter::sources() const {
  const std::lock_guard lock(mutex_);
  return index_.size();
}

VerifiedSources::VerifiedSources(std::size_t sources_max)
    : sources_max_(std::max<std::size_t>(1, sources_max)) {}

void VerifiedSources::add(const SourceAddress& source) {
  const std::lock_guard lock(mutex_);
  const auto found = index_.find(source);
  if (found != index_.end()) {
    lru_.splice(lru_.begin(), lru_, found->second);
    return;
  }
  if (index_.size() >= sources_max_) {
    index_.erase(lru_.back());
    lru_.pop_back();
  }
  lru_.push_front(source);
  index_.emplace(source, lru_.begin());
}

bool VerifiedSources::contains(const SourceAddress& source) const {
  const std::lock_guard lock(mutex_);
  return index_.contains(source);
}

}  // namespace seatflow::http

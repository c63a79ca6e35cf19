// The token buckets of unverified notify traffic (SPEC §14): one per source, spent by each notify
// that fails verification or parsing; while a source's bucket is empty its notifies are refused
// (429) before they are parsed. Plain code (no I/O, the clock passed in), thread-safe for the io
// threads, O(1) per call; the table holds at most `sources_max` buckets, the least recently used
// dropped first (a dropped source starts again with a full bucket).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <unordered_map>

#include "http/source.hpp"

namespace seatflow::http {

// The trusted proxies whose aggregate buckets are kept (FrontDoorSettings::per_proxy).
inline constexpr std::size_t kProxyBucketsMax = 1'024;

struct RateSettings {
  std::uint32_t tokens_per_s = 20;   // SEATFLOW_UNVERIFIED_TOKENS_PER_S
  std::uint32_t burst = 100;         // SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX: a bucket's size
  std::size_t sources_max = 65'536;  // SEATFLOW_RATE_SOURCES_MAX: buckets kept
};

// What the bucket says about one notify.
struct Refusal {
  // 0 when the notify may go on to be verified; otherwise the whole seconds until the source's
  // bucket holds a token again (the Retry-After of its 429).
  std::uint32_t retry_after_s = 0;
  // The source was refused more than a burst of times since its bucket last held a token: it does
  // not honour Retry-After (a flood), so its 429s are held (FrontDoor).
  bool persistent = false;
};

class UnverifiedLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit UnverifiedLimiter(RateSettings settings);
  UnverifiedLimiter(const UnverifiedLimiter&) = delete;
  UnverifiedLimiter& operator=(const UnverifiedLimiter&) = delete;

  // Whether a notify from `source` may go on to be verified. A source without a bucket may.
  [[nodiscard]] Refusal refusal(const SourceAddress& source, Clock::time_point now);
  // A notify from `source` failed verification or parsing: one token less (a bucket is made full,
  // then spent, for a source seen for the first time).
  void spend(const SourceAddress& source, Clock::time_point now);
  [[nodiscard]] std::size_t sources() const;

 private:
  struct Bucket {
    SourceAddress source;
    double tokens = 0;
    Clock::time_point updated;
    std::uint32_t refused = 0;  // refusals since the bucket last held a token
  };
  using Lru = std::list<Bucket>;  // most recently used first

  void refill(Bucket& bucket, Clock::time_point now) const;

  RateSettings settings_;
  mutable std::mutex mutex_;
  Lru lru_;
  std::unordered_map<SourceAddress, Lru::iterator, SourceAddressHash> index_;
};

// The sources that sent a verified notify lately, at most `sources_max` of them (the least recently
// verified dropped first). Only a verified notify adds one, so a flood of forgeries from rotated
// addresses cannot push a gateway out. Thread-safe for the io threads, O(1) per call.
class VerifiedSources {
 public:
  explicit VerifiedSources(std::size_t sources_max);
  VerifiedSources(const VerifiedSources&) = delete;
  VerifiedSources& operator=(const VerifiedSources&) = delete;

  void add(const SourceAddress& source);
  [[nodiscard]] bool contains(const SourceAddress& source) const;

 private:
  using Lru = std::list<SourceAddress>;  // most recently verified first

  std::size_t sources_max_;
  mutable std::mutex mutex_;
  Lru lru_;
  std::unordered_map<SourceAddress, Lru::iterator, SourceAddressHash> index_;
};

}  // namespace seatflow::http

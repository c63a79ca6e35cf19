// The http layer's metrics probe: callback results by channel, their latency, refused connections
// and the live gauges (in-flight callbacks, open connections) /metrics sets before serialising;
// beside them the throttled clock_skew log of stale notifies.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "domain/outcome.hpp"
#include "domain/types.hpp"
#include "http/clock_skew_log.hpp"
#include "observability/registry.hpp"

namespace seatflow::http {

// Upper bounds of the callback latency histogram's buckets, in seconds.
using observability::kLatencyBucketsSeconds;

class HttpProbe {
 public:
  // Registers the families and every (channel, result) child up front: recording is then one
  // atomic add (a counter) or a bucket search and two atomic adds (the histogram), no lookup.
  explicit HttpProbe(observability::Registry& registry);
  HttpProbe(const HttpProbe&) = delete;
  HttpProbe& operator=(const HttpProbe&) = delete;

  void count(domain::Channel channel, domain::CallbackResult result) {
    callbacks_[index(channel)][static_cast<std::size_t>(result)]->Increment();
  }
  void observe_latency(domain::Channel channel, std::chrono::microseconds latency) {
    latency_[index(channel)]->observe(latency);
  }
  // A stale notify (counted through count()) also tells the throttled clock_skew log its skew.
  void note_clock_skew(domain::Channel channel, std::int64_t skew_ms) {
    clock_skew_.note(channel, skew_ms);
  }
  void count_overload() { connections_refused_.Increment(); }  // refused at a connection limit
  // A notify refused 429 before it was parsed: its source's unverified bucket is empty.
  void count_rate_limited(domain::Channel channel) { rate_limited_[index(channel)]->Increment(); }
  // A notify refused 403 before it was parsed: its source is not in the channel's allowlist.
  void count_source_refused(domain::Channel channel) {
    source_refused_[index(channel)]->Increment();
  }
  // The gauges read from live state, set right before a scrape serialises the registry.
  void set_live(std::size_t inflight_callbacks, std::size_t open_connections);
  [[nodiscard]] std::uint64_t callbacks(domain::Channel channel,
                                        domain::CallbackResult result) const;

 private:
  static std::size_t index(domain::Channel channel) { return static_cast<std::size_t>(channel); }
  std::array<std::array<prometheus::Counter*, domain::kCallbackResultCount>, domain::kChannelCount>
      callbacks_{};
  std::array<std::unique_ptr<observability::AtomicHistogram>, domain::kChannelCount> latency_;
  std::array<prometheus::Counter*, domain::kChannelCount> rate_limited_{};
  std::array<prometheus::Counter*, domain::kChannelCount> source_refused_{};
  prometheus::Counter& connections_refused_;
  prometheus::Gauge& inflight_callbacks_;
  prometheus::Gauge& open_connections_;
  ClockSkewLog clock_skew_;
  observability::ScrapeHook hook_;  // last: syncs latency_ into the registry at each scrape
};

}  // namespace seatflow::http

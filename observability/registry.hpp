// The process's one metrics registry (prometheus-cpp core): each module registers its own probe's
// families in it at construction, and /metrics serialises it in the Prometheus text format.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace seatflow::observability {

class Registry;

// Keeps a refresh registered with Registry::on_scrape; destroying it unregisters the refresh
// (waiting for a scrape that is running it).
class ScrapeHook {
 public:
  ScrapeHook() = default;
  ~ScrapeHook();
  ScrapeHook(ScrapeHook&& other) noexcept;
  ScrapeHook& operator=(ScrapeHook&& other) noexcept;
  ScrapeHook(const ScrapeHook&) = delete;
  ScrapeHook& operator=(const ScrapeHook&) = delete;

 private:
  friend class Registry;
  using Hooks = std::list<std::function<void()>>;
  ScrapeHook(Registry* registry, Hooks::iterator hook) : registry_(registry), hook_(hook) {}
  void release();
  Registry* registry_ = nullptr;
  Hooks::iterator hook_{};
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Families are created once, at start-up (Family::Add takes a mutex and hashes the labels):
  // a probe adds every labelled child it will need then and keeps references to them.
  [[nodiscard]] prometheus::Family<prometheus::Counter>& counter(const std::string& name,
                                                                 const std::string& help);
  [[nodiscard]] prometheus::Family<prometheus::Gauge>& gauge(const std::string& name,
                                                             const std::string& help);
  [[nodiscard]] prometheus::Family<prometheus::Histogram>& histogram(const std::string& name,
                                                                     const std::string& help);

  // `refresh` runs right before each serialisation (one scrape at a time), to set the gauges and
  // counters read from live state. It must not call back into the registry's scrape.
  [[nodiscard]] ScrapeHook on_scrape(std::function<void()> refresh);

  // Every registered family in the Prometheus text format 0.0.4 (prometheus::TextSerializer).
  [[nodiscard]] std::string serialize();

 private:
  friend class ScrapeHook;
  std::shared_ptr<prometheus::Registry> registry_;
  std::mutex scrape_mutex_;  // one scrape at a time; guards hooks_
  ScrapeHook::Hooks hooks_;
};

// Brings a prometheus counter up to a monotonic total kept elsewhere (an atomic another part of
// the module reads). Only a scrape refresh calls it, under the registry's scrape mutex.
void sync_counter(prometheus::Counter& counter, std::uint64_t total);

// Upper bounds of the latency histograms' buckets, in seconds (callbacks, group commits).
inline constexpr std::array<double, 14> kLatencyBucketsSeconds = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0};

// A histogram for a hot path: prometheus-cpp 1.0.1's Histogram::Observe takes the child's mutex,
// so observations go to relaxed atomics here (a bucket search, two adds) and the child is brought
// up to date with their increments at each scrape (sync(), from the owner's scrape hook).
// Observations are whole units: microseconds of bounds in seconds (`units_per_bound` 1e6, the
// default, for latencies), or the bounds' own unit (1, for counts such as a batch's size).
class AtomicHistogram {
 public:
  // Adds its child (`labels`, `bounds`) to `family`; its own buckets have the same bounds.
  AtomicHistogram(prometheus::Family<prometheus::Histogram>& family,
                  const prometheus::Labels& labels, std::span<const double> bounds,
                  double units_per_bound = 1e6);
  AtomicHistogram(const AtomicHistogram&) = delete;
  AtomicHistogram& operator=(const AtomicHistogram&) = delete;

  void observe(std::chrono::microseconds latency) {
    observe_units(static_cast<std::uint64_t>(std::max<std::int64_t>(0, latency.count())));
  }
  void observe_units(std::uint64_t units) {
    std::size_t bucket = 0;
    while (bucket < bounds_units_.size() && static_cast<double>(units) > bounds_units_[bucket]) {
      ++bucket;
    }
    buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
    sum_units_.fetch_add(units, std::memory_order_relaxed);
  }
  // Adds what was observed since the last sync to the child; only a scrape hook calls it.
  void sync();

 private:
  prometheus::Histogram& child_;
  double units_per_bound_;
  std::vector<double> bounds_units_;
  std::vector<std::atomic<std::uint64_t>> buckets_;  // one per bound, then +Inf; not cumulative
  std::atomic<std::uint64_t> sum_units_{0};
  std::vector<std::uint64_t> synced_buckets_;  // as of the last sync (scrape mutex)
  std::uint64_t synced_sum_units_ = 0;
};

// The content type of Registry::serialize's text.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace seatflow::observability

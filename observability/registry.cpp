// The registry wrapper: families through prometheus-cpp's builders, scrape hooks, serialisation.
#include "observability/registry.hpp"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cassert>
#include <sstream>

namespace seatflow::observability {

ScrapeHook::~ScrapeHook() {
  release();
}

ScrapeHook::ScrapeHook(ScrapeHook&& other) noexcept
    : registry_(std::exchange(other.registry_, nullptr)), hook_(other.hook_) {}

ScrapeHook& ScrapeHook::operator=(ScrapeHook&& other) noexcept {
  if (this != &other) {
    release();
    registry_ = std::exchange(other.registry_, nullptr);
    hook_ = other.hook_;
  }
  return *this;
}

void ScrapeHook::release() {
  if (registry_ == nullptr) {
    return;
  }
  const std::lock_guard lock(registry_->scrape_mutex_);
  registry_->hooks_.erase(hook_);
  registry_ = nullptr;
}

Registry::Registry() : registry_(std::make_shared<prometheus::Registry>()) {}

Registry::~Registry() {
  // Every probe's hook ends with its probe, and every probe before the registry it registered in.
  assert(hooks_.empty());
}

prometheus::Family<prometheus::Counter>& Registry::counter(const std::string& name,
                                                           const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(*registry_);
}

prometheus::Family<prometheus::Gauge>& Registry::gauge(const std::string& name,
                                                       const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(*registry_);
}

prometheus::Family<prometheus::Histogram>& Registry::histogram(const std::string& name,
                                                               const std::string& help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(*registry_);
}

ScrapeHook Registry::on_scrape(std::function<void()> refresh) {
  const std::lock_guard lock(scrape_mutex_);
  hooks_.push_back(std::move(refresh));
  return ScrapeHook(this, std::prev(hooks_.end()));
}

std::string Registry::serialize() {
  const std::lock_guard lock(scrape_mutex_);
  for (const auto& refresh : hooks_) {
    refresh();
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
  return out.str();
}

void sync_counter(prometheus::Counter& counter, std::uint64_t total) {
  const auto now = static_cast<double>(total);
  const auto before = counter.Value();
  if (now > before) {
    counter.Increment(now - before);
  }
}

AtomicHistogram::AtomicHistogram(prometheus::Family<prometheus::Histogram>& family,
                                 const prometheus::Labels& labels, std::span<const double> bounds,
                                 double units_per_bound)
    : child_(family.Add(labels,
                        prometheus::Histogram::BucketBoundaries(bounds.begin(), bounds.end()))),
      units_per_bound_(units_per_bound),
      buckets_(bounds.size() + 1),
      synced_buckets_(bounds.size() + 1, 0) {
  bounds_units_.reserve(bounds.size());
  for (const double bound : bounds) {
    bounds_units_.push_back(bound * units_per_bound);
  }
}

void AtomicHistogram::sync() {
  std::vector<double> increments(buckets_.size());
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    const auto now = buckets_[b].load(std::memory_order_relaxed);
    increments[b] = static_cast<double>(now - synced_buckets_[b]);
    synced_buckets_[b] = now;
  }
  const auto sum_units = sum_units_.load(std::memory_order_relaxed);
  child_.ObserveMultiple(increments,
                         static_cast<double>(sum_units - synced_sum_units_) / units_per_bound_);
  synced_sum_units_ = sum_units;
}

}  // namespace seatflow::observability

// Process metrics in Prometheus text format: callback results by channel, latency, limits, faults.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "actors/payment_querier.hpp"
#include "actors/refund_probe.hpp"
#include "domain/outcome.hpp"
#include "domain/types.hpp"
#include "persistence/failpoints.hpp"
#include "persistence/reconciler.hpp"

namespace seatflow::http {

// Upper bounds of the latency histogram buckets, in seconds.
inline constexpr std::array<double, 14> kLatencyBucketsSeconds = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0};

struct Gauges {
  std::size_t inflight_callbacks = 0;
  std::size_t open_connections = 0;
  std::size_t live_payment_actors = 0;
  std::uint64_t events_published = 0;     // payment events the relay put on the stream
  std::int64_t event_relay_lag_ms = 0;    // age of the oldest unconfirmed event at the last poll
  std::int64_t event_slot_lag_bytes = 0;  // WAL the event slot had not confirmed at the last poll
  std::uint64_t settled_answers = 0;      // duplicates answered on the io thread (SettledAnswers)
  std::uint64_t store_deadline_cuts = 0;  // store calls cut by the watchdog at their deadline
};

class Metrics {
 public:
  void count(domain::Channel channel, domain::CallbackResult result);
  void observe_latency(domain::Channel channel, std::uint64_t latency_us);
  void count_overload();  // connections refused at the connection limit
  // The reconciler's repair counters, rendered when attached (they outlive the metrics).
  void attach_reconciler(const persistence::ReconcileCounters* counters) { reconcile_ = counters; }
  // The active-query counters (nullptr: no active query, nothing rendered).
  void attach_query(const actors::QueryProbe* probe) { query_ = probe; }
  // The discrepancy-refund counters (nullptr: no refund dialect, nothing rendered).
  void attach_refund(const actors::RefundProbe* probe) { refund_ = probe; }
  [[nodiscard]] std::uint64_t callbacks(domain::Channel channel,
                                        domain::CallbackResult result) const;
  [[nodiscard]] std::string render(const Gauges& gauges,
                                   const persistence::Failpoints* failpoints) const;

 private:
  static constexpr std::size_t kChannels = domain::kChannelCount;
  static constexpr std::size_t kBuckets = kLatencyBucketsSeconds.size();
  std::array<std::array<std::atomic<std::uint64_t>, domain::kCallbackResultCount>, kChannels>
      callbacks_{};
  std::array<std::array<std::atomic<std::uint64_t>, kBuckets + 1>, kChannels> buckets_{};
  std::array<std::atomic<std::uint64_t>, kChannels> latency_sum_us_{};
  std::array<std::atomic<std::uint64_t>, kChannels> latency_count_{};
  std::atomic<std::uint64_t> connections_refused_{0};
  const persistence::ReconcileCounters* reconcile_ = nullptr;
  const actors::QueryProbe* query_ = nullptr;
  const actors::RefundProbe* refund_ = nullptr;
};

}  // namespace seatflow::http

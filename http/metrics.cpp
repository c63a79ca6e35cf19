// Renders the metrics; counters are relaxed atomics, so recording costs one add each.
#include "http/metrics.hpp"

#include <iterator>
#include <sstream>

namespace seatflow::http {
namespace {

constexpr domain::Channel kAllChannels[] = {domain::Channel::hmac, domain::Channel::alipay,
                                            domain::Channel::wechat, domain::Channel::stripe,
                                            domain::Channel::standard};
static_assert(std::size(kAllChannels) == domain::kChannelCount, "every channel has its metrics");

std::size_t index_of(domain::Channel channel) {
  return static_cast<std::size_t>(channel);
}

}  // namespace

void Metrics::count(domain::Channel channel, domain::CallbackResult result) {
  callbacks_[index_of(channel)][static_cast<std::size_t>(result)].fetch_add(
      1, std::memory_order_relaxed);
}

std::uint64_t Metrics::callbacks(domain::Channel channel, domain::CallbackResult result) const {
  return callbacks_[index_of(channel)][static_cast<std::size_t>(result)].load(
      std::memory_order_relaxed);
}

void Metrics::observe_latency(domain::Channel channel, std::uint64_t latency_us) {
  const auto c = index_of(channel);
  std::size_t bucket = 0;
  while (bucket<kBuckets&& static_cast<double>(latency_us)> kLatencyBucketsSeconds[bucket] * 1e6) {
    ++bucket;
  }
  buckets_[c][bucket].fetch_add(1, std::memory_order_relaxed);
  latency_sum_us_[c].fetch_add(latency_us, std::memory_order_relaxed);
  latency_count_[c].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::count_overload() {
  connections_refused_.fetch_add(1, std::memory_order_relaxed);
}

namespace {

void render_query(std::ostringstream& out, const actors::QueryProbe& probe) {
  out << "# HELP seatflow_payment_query_total Active queries of a payment's gateway by channel and "
         "result.\n"
      << "# TYPE seatflow_payment_query_total counter\n";
  for (std::size_t c = 0; c < domain::kChannelCount; ++c) {
    for (std::size_t r = 0; r < actors::kQueryResultCount; ++r) {
      out << "seatflow_payment_query_total{channel=\""
          << domain::to_string(static_cast<domain::Channel>(c)) << "\",result=\""
          << actors::to_string(static_cast<actors::QueryResult>(r)) << "\"} "
          << probe.queries[c][r].load(std::memory_order_relaxed) << '\n';
    }
  }
  out << "# HELP seatflow_payment_query_duration_seconds Gateway query, request to verified "
         "answer.\n"
      << "# TYPE seatflow_payment_query_duration_seconds histogram\n";
  std::uint64_t cumulative = 0;
  for (std::size_t b = 0; b < actors::QueryProbe::kBucketsSeconds.size(); ++b) {
    cumulative += probe.latency_buckets[b].load(std::memory_order_relaxed);
    out << "seatflow_payment_query_duration_seconds_bucket{le=\""
        << actors::QueryProbe::kBucketsSeconds[b] << "\"} " << cumulative << '\n';
  }
  cumulative += probe.latency_buckets.back().load(std::memory_order_relaxed);
  out << "seatflow_payment_query_duration_seconds_bucket{le=\"+Inf\"} " << cumulative << '\n'
      << "seatflow_payment_query_duration_seconds_sum "
      << static_cast<double>(probe.latency_sum_us.load(std::memory_order_relaxed)) / 1e6 << '\n'
      << "seatflow_payment_query_duration_seconds_count "
      << probe.latency_count.load(std::memory_order_relaxed) << '\n';
}

void render_refund(std::ostringstream& out, const actors::RefundProbe& probe) {
  out << "# HELP seatflow_refund_total Gateway refunds of discrepancies by channel and result.\n"
      << "# TYPE seatflow_refund_total counter\n";
  for (std::size_t c = 0; c < domain::kChannelCount; ++c) {
    for (std::size_t r = 0; r < actors::kRefundCallResultCount; ++r) {
      out << "seatflow_refund_total{channel=\""
          << domain::to_string(static_cast<domain::Channel>(c)) << "\",result=\""
          << actors::to_string(static_cast<actors::RefundCallResult>(r)) << "\"} "
          << probe.refunds[c][r].load(std::memory_order_relaxed) << '\n';
    }
  }
}

}  // namespace

std::string Metrics::render(const Gauges& gauges, const persistence::Failpoints* failpoints) const {
  std::ostringstream out;
  out << "# HELP seatflow_payment_callback_total Payment callbacks by channel and result.\n"
      << "# TYPE seatflow_payment_callback_total counter\n";
  for (const auto channel : kAllChannels) {
    for (std::size_t r = 0; r < domain::kCallbackResultCount; ++r) {
      const auto result = static_cast<domain::CallbackResult>(r);
      out << "seatflow_payment_callback_total{channel=\"" << domain::to_string(channel)
          << "\",result=\"" << domain::to_string(result) << "\"} " << callbacks(channel, result)
          << '\n';
    }
  }
  out << "# HELP seatflow_payment_callback_duration_seconds Verified callback to reply.\n"
      << "# TYPE seatflow_payment_callback_duration_seconds histogram\n";
  for (const auto channel : kAllChannels) {
    const auto c = index_of(channel);
    const auto label = domain::to_string(channel);
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) {
      cumulative += buckets_[c][b].load(std::memory_order_relaxed);
      out << "seatflow_payment_callback_duration_seconds_bucket{channel=\"" << label << "\",le=\""
          << kLatencyBucketsSeconds[b] << "\"} " << cumulative << '\n';
    }
    cumulative += buckets_[c][kBuckets].load(std::memory_order_relaxed);
    out << "seatflow_payment_callback_duration_seconds_bucket{channel=\"" << label
        << "\",le=\"+Inf\"} " << cumulative << '\n'
        << "seatflow_payment_callback_duration_seconds_sum{channel=\"" << label << "\"} "
        << static_cast<double>(latency_sum_us_[c].load(std::memory_order_relaxed)) / 1e6 << '\n'
        << "seatflow_payment_callback_duration_seconds_count{channel=\"" << label << "\"} "
        << latency_count_[c].load(std::memory_order_relaxed) << '\n';
  }
  out << "# TYPE seatflow_inflight_callbacks gauge\nseatflow_inflight_callbacks "
      << gauges.inflight_callbacks << '\n'
      << "# TYPE seatflow_open_connections gauge\nseatflow_open_connections "
      << gauges.open_connections << '\n'
      << "# TYPE seatflow_payment_actors gauge\nseatflow_payment_actors "
      << gauges.live_payment_actors << '\n'
      << "# HELP seatflow_duplicates_answered_on_io_thread_total Copies of committed callbacks "
         "answered from SettledAnswers without an actor hand-off.\n"
      << "# TYPE seatflow_duplicates_answered_on_io_thread_total counter\n"
         "seatflow_duplicates_answered_on_io_thread_total "
      << gauges.settled_answers << '\n'
      << "# TYPE seatflow_connections_refused_total counter\nseatflow_connections_refused_total "
      << connections_refused_.load(std::memory_order_relaxed) << '\n'
      << "# HELP seatflow_store_call_deadline_cuts_total PostgreSQL/Redis calls whose socket the "
         "watchdog shut down at their deadline.\n"
      << "# TYPE seatflow_store_call_deadline_cuts_total counter\n"
         "seatflow_store_call_deadline_cuts_total "
      << gauges.store_deadline_cuts << '\n';
  out << "# HELP seatflow_events_published_total Payment events published to the Redis Stream.\n"
      << "# TYPE seatflow_events_published_total counter\nseatflow_events_published_total "
      << gauges.events_published << '\n'
      << "# HELP seatflow_event_relay_lag_seconds Age of the oldest payment event the event slot "
         "has not confirmed.\n"
      << "# TYPE seatflow_event_relay_lag_seconds gauge\nseatflow_event_relay_lag_seconds "
      << static_cast<double>(gauges.event_relay_lag_ms) / 1000.0 << '\n'
      << "# HELP seatflow_event_slot_lag_bytes WAL bytes the event slot has not confirmed.\n"
      << "# TYPE seatflow_event_slot_lag_bytes gauge\nseatflow_event_slot_lag_bytes "
      << gauges.event_slot_lag_bytes << '\n';
  out << "# HELP seatflow_failpoint_hits_total Injected faults by failpoint.\n"
      << "# TYPE seatflow_failpoint_hits_total counter\n";
  for (std::size_t i = 0; i < persistence::kFailpointCount; ++i) {
    const auto id = static_cast<persistence::FailpointId>(i);
    out << "seatflow_failpoint_hits_total{name=\"" << persistence::to_string(id) << "\"} "
        << (failpoints != nullptr ? failpoints->hits(id) : 0) << '\n';
  }
  if (query_ != nullptr) {
    render_query(out, *query_);
  }
  if (refund_ != nullptr) {
    render_refund(out, *refund_);
  }
  if (reconcile_ != nullptr) {
    const auto load = [](const std::atomic<std::uint64_t>& v) {
      return v.load(std::memory_order_relaxed);
    };
    out << "# HELP seatflow_reconcile_repairs_total Seat repairs by the reconciler, by kind.\n"
        << "# TYPE seatflow_reconcile_repairs_total counter\n"
        << "seatflow_reconcile_repairs_total{kind=\"seat_sold\"} " << load(reconcile_->seats_sold)
        << '\n'
        << "seatflow_reconcile_repairs_total{kind=\"seat_released\"} "
        << load(reconcile_->seats_released) << '\n'
        << "seatflow_reconcile_repairs_total{kind=\"seat_relocked\"} "
        << load(reconcile_->seats_relocked) << '\n'
        << "seatflow_reconcile_repairs_total{kind=\"seat_conflict\"} "
        << load(reconcile_->seat_conflicts) << '\n'
        << "# TYPE seatflow_reconcile_passes_total counter\nseatflow_reconcile_passes_total "
        << load(reconcile_->passes) << '\n'
        << "# TYPE seatflow_reconcile_errors_total counter\nseatflow_reconcile_errors_total "
        << load(reconcile_->errors) << '\n';
  }
  return out.str();
}

}  // namespace seatflow::http

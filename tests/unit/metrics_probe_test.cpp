// The modules' probes in one registry: what they record comes back out of the Prometheus text
// (prometheus-cpp's TextSerializer) under today's series names, labels and units.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <sstream>
#include <string>

#include "actors/payment_querier.hpp"
#include "actors/refund_probe.hpp"
#include "http/probe.hpp"
#include "observability/registry.hpp"
#include "persistence/drivers/failpoints.hpp"
#include "persistence/jobs/reconciler.hpp"
#include "support/failpoints.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

// Every sample line of an exposition: series (name and labels) → value.
std::map<std::string, double> parse_samples(const std::string& text) {
  std::map<std::string, double> samples;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.front() == '#') {
      continue;
    }
    const auto space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    const bool fresh =
        samples.emplace(line.substr(0, space), std::stod(line.substr(space + 1))).second;
    EXPECT_TRUE(fresh) << "series written twice: " << line;
  }
  return samples;
}

std::size_t count_prefix(const std::map<std::string, double>& samples, const std::string& prefix) {
  std::size_t n = 0;
  for (const auto& [series, value] : samples) {
    n += series.rfind(prefix, 0) == 0 ? 1 : 0;
  }
  return n;
}

TEST(MetricsProbe, CallbackCounterAndLatencyHistogramKeepTheirSeries) {
  observability::Registry registry;
  http::HttpProbe probe(registry);
  probe.count(domain::Channel::hmac, domain::CallbackResult::applied);
  probe.count(domain::Channel::hmac, domain::CallbackResult::applied);
  probe.count(domain::Channel::stripe, domain::CallbackResult::rejected_signature);
  probe.observe_latency(domain::Channel::hmac, std::chrono::microseconds(3'200));
  probe.observe_latency(domain::Channel::hmac, std::chrono::microseconds(500));  // on a bound
  probe.observe_latency(domain::Channel::hmac, std::chrono::microseconds(20'000'000));
  probe.count_overload();
  probe.set_live(3, 7);
  const auto text = registry.serialize();
  const auto samples = parse_samples(text);

  EXPECT_NE(text.find("# TYPE seatflow_payment_callback_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE seatflow_payment_callback_duration_seconds histogram\n"),
            std::string::npos);
  EXPECT_EQ(samples.at(R"(seatflow_payment_callback_total{channel="hmac",result="applied"})"), 2);
  EXPECT_EQ(samples.at(
                R"(seatflow_payment_callback_total{channel="stripe",result="rejected_signature"})"),
            1);
  EXPECT_EQ(samples.at(R"(seatflow_payment_callback_total{channel="wechat",result="duplicate"})"),
            0);
  // Every (channel, result) pair is there from the start, not only the ones counted.
  EXPECT_EQ(count_prefix(samples, "seatflow_payment_callback_total{"),
            domain::kChannelCount * domain::kCallbackResultCount);
  EXPECT_EQ(probe.callbacks(domain::Channel::hmac, domain::CallbackResult::applied), 2U);

  // Buckets are cumulative with `le` bounds as before (0.0005 … 10, +Inf); 500 µs is in le=0.0005.
  const std::string bucket =
      R"(seatflow_payment_callback_duration_seconds_bucket{channel="hmac",le=")";
  EXPECT_EQ(samples.at(bucket + "0.0005\"}"), 1);
  EXPECT_EQ(samples.at(bucket + "0.0025\"}"), 1);
  EXPECT_EQ(samples.at(bucket + "0.005\"}"), 2);
  EXPECT_EQ(samples.at(bucket + "1\"}"), 2);
  EXPECT_EQ(samples.at(bucket + "10\"}"), 2);
  EXPECT_EQ(samples.at(bucket + "+Inf\"}"), 3);
  EXPECT_EQ(count_prefix(samples, bucket), http::kLatencyBucketsSeconds.size() + 1);
  EXPECT_EQ(samples.at(R"(seatflow_payment_callback_duration_seconds_count{channel="hmac"})"), 3);
  // Observed in seconds: the sum is 0.0032 + 0.0005 + 20 s.
  EXPECT_NEAR(samples.at(R"(seatflow_payment_callback_duration_seconds_sum{channel="hmac"})"),
              20.0037, 1e-9);
  EXPECT_EQ(samples.at(R"(seatflow_payment_callback_duration_seconds_count{channel="alipay"})"), 0);

  // Each scrape adds only what was observed since the one before.
  const std::string count = R"(seatflow_payment_callback_duration_seconds_count{channel="hmac"})";
  EXPECT_EQ(parse_samples(registry.serialize()).at(count), 3);
  probe.observe_latency(domain::Channel::hmac, std::chrono::microseconds(30'000));
  const auto later = parse_samples(registry.serialize());
  EXPECT_EQ(later.at(count), 4);
  EXPECT_EQ(later.at(bucket + "0.025\"}"), 2);
  EXPECT_EQ(later.at(bucket + "0.05\"}"), 3);

  EXPECT_EQ(samples.at("seatflow_connections_refused_total"), 1);
  EXPECT_EQ(samples.at("seatflow_inflight_callbacks"), 3);
  EXPECT_EQ(samples.at("seatflow_open_connections"), 7);
}

TEST(MetricsProbe, QueryRefundAndReconcileProbesShareTheRegistry) {
  observability::Registry registry;
  actors::QueryProbe query(registry);
  actors::RefundProbe refund(registry);
  persistence::ReconcileProbe reconcile(registry);
  query.count(domain::Channel::alipay, actors::QueryResult::paid, std::chrono::milliseconds(30));
  refund.count(domain::Channel::wechat, actors::RefundCallResult::refused);
  reconcile.seats_sold.Increment(4);
  reconcile.passes.Increment();
  const auto samples = parse_samples(registry.serialize());

  EXPECT_EQ(samples.at(R"(seatflow_payment_query_total{channel="alipay",result="paid"})"), 1);
  EXPECT_EQ(count_prefix(samples, "seatflow_payment_query_total{"),
            domain::kChannelCount * actors::kQueryResultCount);
  EXPECT_EQ(samples.at(R"(seatflow_payment_query_duration_seconds_bucket{le="0.025"})"), 0);
  EXPECT_EQ(samples.at(R"(seatflow_payment_query_duration_seconds_bucket{le="0.05"})"), 1);
  EXPECT_DOUBLE_EQ(samples.at("seatflow_payment_query_duration_seconds_sum"), 0.03);
  EXPECT_EQ(samples.at(R"(seatflow_refund_total{channel="wechat",result="refused"})"), 1);
  EXPECT_EQ(refund.refunds(domain::Channel::wechat, actors::RefundCallResult::refused), 1U);
  EXPECT_EQ(samples.at(R"(seatflow_reconcile_repairs_total{kind="seat_sold"})"), 4);
  EXPECT_EQ(samples.at(R"(seatflow_reconcile_repairs_total{kind="seat_conflict"})"), 0);
  EXPECT_EQ(samples.at("seatflow_reconcile_passes_total"), 1);
  EXPECT_EQ(samples.at("seatflow_reconcile_errors_total"), 0);
}

TEST(MetricsProbe, FailpointHitsAreReadAtEachScrape) {
  auto failpoints = testing::failpoints("mark_sold=error");
  observability::Registry registry;
  const persistence::FailpointProbe probe(registry, &failpoints);
  const std::string series = R"(seatflow_failpoint_hits_total{name="mark_sold"})";
  EXPECT_EQ(parse_samples(registry.serialize()).at(series), 0);
  ASSERT_TRUE(failpoints.hit(persistence::FailpointId::mark_sold));
  ASSERT_TRUE(failpoints.hit(persistence::FailpointId::mark_sold));
  EXPECT_EQ(parse_samples(registry.serialize()).at(series), 2);
  ASSERT_TRUE(failpoints.hit(persistence::FailpointId::mark_sold));
  const auto samples = parse_samples(registry.serialize());
  EXPECT_EQ(samples.at(series), 3);
  EXPECT_EQ(samples.at(R"(seatflow_failpoint_hits_total{name="pg_commit"})"), 0);
  EXPECT_EQ(count_prefix(samples, "seatflow_failpoint_hits_total{"), persistence::kFailpointCount);
}

TEST(MetricsProbe, AScrapeHookRunsUntilItsHandleIsGone) {
  observability::Registry registry;
  auto& gauge = registry.gauge("seatflow_test_gauge", "A gauge set at scrape time.").Add({});
  int runs = 0;
  {
    const auto hook = registry.on_scrape([&] { gauge.Set(++runs); });
    EXPECT_EQ(parse_samples(registry.serialize()).at("seatflow_test_gauge"), 1);
    EXPECT_EQ(parse_samples(registry.serialize()).at("seatflow_test_gauge"), 2);
  }
  EXPECT_EQ(parse_samples(registry.serialize()).at("seatflow_test_gauge"), 2);
  EXPECT_EQ(runs, 2);
}

TEST(MetricsProbe, SyncCounterNeverGoesBackwards) {
  observability::Registry registry;
  auto& counter = registry.counter("seatflow_test_total", "").Add({});
  observability::sync_counter(counter, 5);
  EXPECT_EQ(counter.Value(), 5);
  observability::sync_counter(counter, 3);
  EXPECT_EQ(counter.Value(), 5);
  observability::sync_counter(counter, 9);
  EXPECT_EQ(counter.Value(), 9);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

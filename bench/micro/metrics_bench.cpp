// Micro-benchmark of one callback's metric recording: its result counter and its latency histogram.
#include <benchmark/benchmark.h>

#include <chrono>

#include "domain/outcome.hpp"
#include "domain/types.hpp"
#include "http/probe.hpp"
#include "observability/registry.hpp"

namespace {

using seatflow::domain::CallbackResult;
using seatflow::domain::Channel;

// What CallbackAnswer::answer records per callback: one counter increment, one latency
// observation (3.2 ms, in the 0.005 s bucket, so the bucket search passes four bounds).
void BM_RecordOneCallback(benchmark::State& state) {
  static seatflow::observability::Registry registry;
  static seatflow::http::HttpProbe probe(registry);
  for (auto _ : state) {
    probe.count(Channel::hmac, CallbackResult::applied);
    probe.observe_latency(Channel::hmac, std::chrono::microseconds(3'200));
  }
  benchmark::DoNotOptimize(probe.callbacks(Channel::hmac, CallbackResult::applied));
}
BENCHMARK(BM_RecordOneCallback);
BENCHMARK(BM_RecordOneCallback)->Threads(2);

}  // namespace

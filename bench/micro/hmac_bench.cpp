// Micro-benchmarks of the `hmac` channel hot path: verify() of a typical body and raw sign().
#include <benchmark/benchmark.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <string>
#include <vector>

#include "channels/hmac/hmac_channel.hpp"
#include "codec/digest.hpp"

namespace {

using seatflow::channels::HmacChannel;
using seatflow::channels::HmacConfig;
using seatflow::channels::InboundRequest;
using seatflow::codec::Headers;
using seatflow::domain::VerifiedCallback;

constexpr std::int64_t kTimestampMs = 1'700'000'000'000;
const std::vector<std::string> kOneSecret = {"bench-secret-0123456789abcdef"};
// The body is signed with the last secret, so verify() tries all three.
const std::vector<std::string> kThreeSecrets = {
    "bench-new-secret-aaaaaaaa", "bench-mid-secret-bbbbbbbb", "bench-secret-0123456789abcdef"};

// A ~165-byte body (the 64-character sign alone is 72 bytes with its key) signed under
// kOneSecret[0]; built once, outside the timed loop.
std::string make_body() {
  const HmacChannel signer(HmacConfig{kOneSecret, 300'000});
  return signer.signed_body("cb-00000001", "P0000000001", 1, kTimestampMs);
}

void run_verify(benchmark::State& state, const HmacChannel& channel) {
  const std::string body = make_body();
  const Headers headers;
  const InboundRequest request{body, &headers, kTimestampMs};
  if (!channel.verify(request).ok()) {
    state.SkipWithError("benchmark body does not verify");
    return;
  }
  for (auto _ : state) {
    auto result = channel.verify(request);
    benchmark::DoNotOptimize(result);
  }
  state.counters["body_bytes"] =
      benchmark::Counter(static_cast<double>(body.size()), benchmark::Counter::kAvgThreads);
  state.SetItemsProcessed(state.iterations());
}

void BM_HmacVerifyOneSecret(benchmark::State& state) {
  const HmacChannel channel(HmacConfig{kOneSecret, 300'000});
  run_verify(state, channel);
}
BENCHMARK(BM_HmacVerifyOneSecret);

void BM_HmacVerifyThreeSecretsMatchLast(benchmark::State& state) {
  const HmacChannel channel(HmacConfig{kThreeSecrets, 300'000});
  run_verify(state, channel);
}
BENCHMARK(BM_HmacVerifyThreeSecretsMatchLast);

void BM_HmacVerifySharedAcrossThreads(benchmark::State& state) {
  // One channel shared by every benchmark thread, as the HTTP I/O threads share it.
  static const HmacChannel channel(HmacConfig{kOneSecret, 300'000});
  run_verify(state, channel);
}
BENCHMARK(BM_HmacVerifySharedAcrossThreads)->Threads(1)->Threads(2)->UseRealTime();

void BM_HmacSign(benchmark::State& state) {
  const HmacChannel channel(HmacConfig{kOneSecret, 300'000});
  for (auto _ : state) {
    auto sign = channel.sign("cb-00000001", "P0000000001", 1, kTimestampMs);
    benchmark::DoNotOptimize(sign);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HmacSign);

// The payload digest every verified callback computes (part of verify() above).
void BM_BusinessDigest(benchmark::State& state) {
  VerifiedCallback callback;
  callback.callback_id = std::string("cb-00000001");
  callback.payment_no = std::string("P0000000001");
  callback.kind = seatflow::domain::CallbackKind::success;
  for (auto _ : state) {
    auto digest = seatflow::codec::business_digest(callback);
    benchmark::DoNotOptimize(digest);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BusinessDigest);

// Baseline: OpenSSL's one-shot HMAC(), which fetches and keys a fresh context on every call.
void BM_OneShotHmacBaseline(benchmark::State& state) {
  const std::string& key = kOneSecret[0];
  const std::string message =
      seatflow::channels::hmac_canonical("cb-00000001", "P0000000001", 1, kTimestampMs);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  for (auto _ : state) {
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_len);
    benchmark::DoNotOptimize(mac);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_OneShotHmacBaseline);

}  // namespace

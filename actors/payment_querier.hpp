// Asks a payment's gateway about it (SPEC §10) and runs a paid or failed answer through the
// callback pipeline (Engine::submit: the payment actor, the executor, the same CAS and mark_sold),
// so a query racing a late callback, a close or the sweeper has exactly one winner. Shared by the
// query scheduler, the sweeper and the sync API; blocking: only detached actors call it.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/messages.hpp"
#include "channels/query.hpp"
#include "net/http_client.hpp"
#include "observability/registry.hpp"
#include "persistence/stores/query_store.hpp"

namespace seatflow::actors {

// What one query came to: the metric's `result` label.
enum class QueryResult : std::uint8_t {
  paid = 0,
  failed,
  pending,
  not_found,
  rejected,     // the answer failed verification, was malformed or named another payment/amount
  unreachable,  // no answer within the deadlines
  no_channel,   // the payment's channel has no query dialect configured
};
inline constexpr std::size_t kQueryResultCount = 7;
[[nodiscard]] constexpr std::string_view to_string(QueryResult result) {
  constexpr std::string_view kNames[] = {"paid",     "failed",      "pending",   "not_found",
                                         "rejected", "unreachable", "no_channel"};
  return kNames[static_cast<std::size_t>(result)];
}

// The actors' query probe: seatflow_payment_query_total{channel,result} and the latency histogram
// seatflow_payment_query_duration_seconds, registered with every child at construction.
class QueryProbe {
 public:
  static constexpr std::array<double, 8> kBucketsSeconds = {0.01, 0.025, 0.05, 0.1,
                                                            0.25, 0.5,   1,    2.5};
  explicit QueryProbe(observability::Registry& registry);
  void count(domain::Channel channel, QueryResult result, std::chrono::microseconds latency);
  [[nodiscard]] std::uint64_t queries(domain::Channel channel, QueryResult result) const;

 private:
  std::array<std::array<prometheus::Counter*, kQueryResultCount>, domain::kChannelCount> queries_{};
  prometheus::Histogram& latency_;
};

struct QueryRun {
  QueryResult result = QueryResult::unreachable;
  std::string detail;                              // log-safe
  std::optional<domain::CallbackOutcome> outcome;  // the pipeline's answer, when awaited
  std::string trade_no = {};  // the gateway's trade number in a verified answer (Stripe's intent)
};

class PaymentQuerier {
 public:
  using Submit = std::function<void(domain::VerifiedCallback, ReplyFn)>;

  PaymentQuerier(const std::vector<std::shared_ptr<const channels::QueryDialect>>& dialects,
                 std::unique_ptr<net::HttpClient> client, Submit submit,
                 std::chrono::milliseconds apply_timeout, observability::Registry& metrics);

  // Queries the payment and submits a paid/failed answer. With `wait`, blocks (at most the apply
  // timeout) for the pipeline's outcome; without, the outcome goes to the callback metrics only.
  [[nodiscard]] QueryRun run(const persistence::DueQuery& payment, bool wait);
  [[nodiscard]] bool has_dialect(domain::Channel channel) const;
  [[nodiscard]] const QueryProbe& probe() const { return probe_; }

 private:
  std::array<std::shared_ptr<const channels::QueryDialect>, domain::kChannelCount> dialects_;
  std::unique_ptr<net::HttpClient> client_;
  Submit submit_;
  std::chrono::milliseconds apply_timeout_;
  QueryProbe probe_;
};

}  // namespace seatflow::actors

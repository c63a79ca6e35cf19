// The payment at its gateway (SPEC §16): creates a payment at its channel's gateway, and closes it
// there (asking the gateway about it first, and again when the close says it is paid, so a paid
// payment is applied through the pipeline and never cancelled). Nothing local moves here: callers
// move rows only on a result the gateway confirmed. Shared by the gateway actors and the sweeper;
// blocking: only detached actors call it.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "actors/payment_querier.hpp"
#include "channels/payment_gateway.hpp"
#include "net/http_client.hpp"
#include "observability/registry.hpp"
#include "persistence/stores/gateway_store.hpp"

namespace seatflow::actors {

// What one create or close came to: the metrics' `result` label.
enum class GatewayResult : std::uint8_t {
  ok = 0,       // created, or closed (or nothing to close)
  paid,         // close: the gateway says it is paid (applied through the pipeline)
  refused,      // a verified answer that did not do it
  unreachable,  // no answer within the deadlines
  rejected,     // the answer did not verify, was malformed or named another payment
};
inline constexpr std::size_t kGatewayResultCount = 5;
[[nodiscard]] constexpr std::string_view to_string(GatewayResult result) {
  constexpr std::string_view kNames[] = {"ok", "paid", "refused", "unreachable", "rejected"};
  return kNames[static_cast<std::size_t>(result)];
}

// seatflow_gateway_create_total{channel,result}, seatflow_gateway_close_total{channel,result} and
// seatflow_gateway_close_unconfirmed_total{channel} (the sweeper cancelled after the grace).
class GatewayProbe {
 public:
  explicit GatewayProbe(observability::Registry& registry);
  void created(domain::Channel channel, GatewayResult result);
  void closed(domain::Channel channel, GatewayResult result);
  void close_unconfirmed(domain::Channel channel);
  [[nodiscard]] std::uint64_t creates(domain::Channel channel, GatewayResult result) const;
  [[nodiscard]] std::uint64_t closes(domain::Channel channel, GatewayResult result) const;

 private:
  using GatewayRow = std::array<prometheus::Counter*, kGatewayResultCount>;
  std::array<GatewayRow, domain::kChannelCount> creates_{};
  std::array<GatewayRow, domain::kChannelCount> closes_{};
  std::array<prometheus::Counter*, domain::kChannelCount> unconfirmed_{};
};

struct GatewayRun {
  GatewayResult result = GatewayResult::unreachable;
  std::string detail;       // log-safe: why, when not ok
  std::string pay_json;     // create ok: the "pay" object as stored
  std::string gateway_ref;  // create ok: the gateway's own id to keep, or empty
};

// A gateway actor's answer: what it found of the payment, and the gateway's run when it called.
struct GatewayAnswer {
  enum class Subject : std::uint8_t {
    unknown,       // no such payment
    not_pending,   // the payment is no longer PENDING: nothing to create or close at the gateway
    no_gateway,    // its channel has no gateway here (or closing there is off): local only
    already,       // create: the gateway created it before; `run.pay_json` is what it said
    called,        // the gateway was asked: `run` says how it went
    store_failed,  // the store could not be read or written (the gateway's answer is not kept)
  };
  Subject subject = Subject::unknown;
  GatewayRun run;
};

class PaymentGatewayCaller {
 public:
  // `querier` may be null (no channel has a query dialect): a close then asks nothing first.
  PaymentGatewayCaller(
      const std::vector<std::shared_ptr<const channels::PaymentGatewayDialect>>& dialects,
      std::unique_ptr<net::HttpClient> client, std::shared_ptr<PaymentQuerier> querier,
      observability::Registry& metrics);

  [[nodiscard]] bool has_dialect(domain::Channel channel) const;
  [[nodiscard]] GatewayRun create(domain::Channel channel, const channels::CreateTarget& target);
  // Query, close, and on a paid close query again (applied through the pipeline).
  [[nodiscard]] GatewayRun close(const persistence::GatewaySubject& subject);
  [[nodiscard]] GatewayProbe& probe() { return probe_; }

 private:
  [[nodiscard]] GatewayRun close_call(const channels::PaymentGatewayDialect& dialect,
                                      const channels::CloseTarget& target);

  std::array<std::shared_ptr<const channels::PaymentGatewayDialect>, domain::kChannelCount>
      dialects_;
  std::unique_ptr<net::HttpClient> client_;
  std::shared_ptr<PaymentQuerier> querier_;
  GatewayProbe probe_;
};

// The stored "pay" object of a confirmed creation: {"kind": …, "<field>": value}.
[[nodiscard]] std::string pay_json(const channels::CreateAnswer& answer);

}  // namespace seatflow::actors

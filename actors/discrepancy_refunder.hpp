// Gives a discrepancy's money back through its payment's gateway (SPEC §12): the attempt is
// written first (persistence/refund_store), then the channel's refund dialect is sent through the
// outbound client with the query's deadlines, then the verified outcome is stored — succeeded
// resolves the discrepancy with discrepancy.refunded, anything else leaves it open with the
// reason. Blocking: only a detached actor (or a tool, or a test) calls run().
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/refund_probe.hpp"
#include "channels/refund.hpp"
#include "net/http_client.hpp"
#include "persistence/stores/refund_store.hpp"

namespace seatflow::actors {

// A pending attempt's lease outlasts the gateway call (the client's total deadline) by this much,
// so only a crashed attempt's row is taken again, never a live one.
inline constexpr std::uint32_t kRefundLeaseMarginMs = 10'000;
// Refunds an engine runs or queues at once; more are answered 503.
inline constexpr std::size_t kRefundsInFlightMax = 16;

// What a refund request came to; the HTTP layer maps each to a status.
enum class RefundStatus : std::uint8_t {
  refunded,        // 200: the gateway took it, the discrepancy is resolved
  not_found,       // 404
  conflict,        // 409: not refundable, already refunded/resolved, or in flight
  gateway_failed,  // 502: refused, unreachable or an answer that proved nothing; still open
  unavailable,     // 503: the store failed, or too many refunds at once
};

// What the gateway answered this call, as the refund's answer shows it.
struct RefundOutcome {
  std::string status;  // "succeeded" or "failed"
  std::string reason;  // log-safe
};

// A refund request's answer; http/ builds its body. It is the refund actor's typed reply to a
// RefundJob (RefundActor), which the engine's asker hands to the HTTP layer.
struct RefundRun {
  RefundStatus status = RefundStatus::unavailable;
  std::string detail;  // log-safe: the error message
  // 200 and 502: this call's outcome, and the discrepancy read after it was stored (nullopt when
  // it could not be read) with its refund's status and reason this call's.
  std::optional<RefundOutcome> outcome;
  std::optional<persistence::DiscrepancyRow> discrepancy;
};

class DiscrepancyRefunder {
 public:
  DiscrepancyRefunder(const std::vector<std::shared_ptr<const channels::RefundDialect>>& dialects,
                      std::unique_ptr<net::HttpClient> client, observability::Registry& metrics);

  // Refunds the discrepancy once: see the file comment.
  [[nodiscard]] RefundRun run(persistence::RefundStore& store, std::int64_t discrepancy_id);

  // This engine's guard against a second request for a discrepancy whose refund is queued or
  // running here (the lease guards across engines and crashes). A `taken` claim is given back
  // with release().
  enum class Claim : std::uint8_t { taken, in_flight, overloaded };
  [[nodiscard]] Claim claim(std::int64_t discrepancy_id);
  void release(std::int64_t discrepancy_id);

  [[nodiscard]] std::uint32_t lease_ms() const;
  [[nodiscard]] const RefundProbe& probe() const { return probe_; }
  // "" when the channel can be refunded here; else why not.
  [[nodiscard]] std::string channel_refusal(domain::Channel channel) const;

 private:
  // The gateway call and its verified outcome.
  struct Call {
    RefundCallResult result = RefundCallResult::unreachable;
    std::string reason;  // log-safe
    std::string gateway_refund_no;
  };
  [[nodiscard]] Call call(const channels::RefundDialect& dialect,
                          const persistence::RefundAttempt& attempt) const;
  [[nodiscard]] RefundRun answer(persistence::RefundStore& store, std::int64_t discrepancy_id,
                                 RefundStatus status, std::string detail, const Call* call) const;

  std::array<std::shared_ptr<const channels::RefundDialect>, domain::kChannelCount> dialects_;
  std::unique_ptr<net::HttpClient> client_;
  RefundProbe probe_;
  std::mutex claims_mutex_;
  std::set<std::int64_t> claims_;
};

}  // namespace seatflow::actors

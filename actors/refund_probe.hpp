// The counters of gateway refunds, seatflow_refund_total{channel,result}. Header-only: /metrics
// (and the fuzz build of http/) renders them without linking the refunder.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "domain/types.hpp"

namespace seatflow::actors {

// What one gateway refund call came to: the metric's `result` label.
enum class RefundCallResult : std::uint8_t {
  succeeded = 0,  // the gateway took the refund
  refused,        // the gateway said no (a verified answer)
  rejected,       // the answer failed verification or was malformed: the outcome is unknown
  unreachable,    // no answer within the deadlines
};
inline constexpr std::size_t kRefundCallResultCount = 4;

[[nodiscard]] constexpr std::string_view to_string(RefundCallResult result) {
  constexpr std::string_view kNames[] = {"succeeded", "refused", "rejected", "unreachable"};
  return kNames[static_cast<std::size_t>(result)];
}

struct RefundProbe {
  std::array<std::array<std::atomic<std::uint64_t>, kRefundCallResultCount>, domain::kChannelCount>
      refunds{};
  void count(domain::Channel channel, RefundCallResult result) {
    refunds[static_cast<std::size_t>(channel)][static_cast<std::size_t>(result)].fetch_add(
        1, std::memory_order_relaxed);
  }
};

}  // namespace seatflow::actors

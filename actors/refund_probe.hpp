// The actors' refund probe: gateway refunds of discrepancies,
// seatflow_refund_total{channel,result}.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "domain/types.hpp"
#include "observability/registry.hpp"

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

class RefundProbe {
 public:
  // Registers the family and every (channel, result) child, so counting is one atomic add.
  explicit RefundProbe(observability::Registry& registry) {
    auto& family = registry.counter("seatflow_refund_total",
                                    "Gateway refunds of discrepancies by channel and result.");
    for (std::size_t c = 0; c < domain::kChannelCount; ++c) {
      const std::string channel(domain::to_string(static_cast<domain::Channel>(c)));
      for (std::size_t r = 0; r < kRefundCallResultCount; ++r) {
        refunds_[c][r] =
            &family.Add({{"channel", channel},
                         {"result", std::string(to_string(static_cast<RefundCallResult>(r)))}});
      }
    }
  }
  void count(domain::Channel channel, RefundCallResult result) {
    refunds_[static_cast<std::size_t>(channel)][static_cast<std::size_t>(result)]->Increment();
  }
  [[nodiscard]] std::uint64_t refunds(domain::Channel channel, RefundCallResult result) const {
    return static_cast<std::uint64_t>(
        refunds_[static_cast<std::size_t>(channel)][static_cast<std::size_t>(result)]->Value());
  }

 private:
  std::array<std::array<prometheus::Counter*, kRefundCallResultCount>, domain::kChannelCount>
      refunds_{};
};

}  // namespace seatflow::actors

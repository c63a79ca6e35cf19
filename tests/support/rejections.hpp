// Test helper: the reason of a channel's answer, or nullopt when it verified.
#pragma once

#include <optional>
#include <variant>

#include "channels/channel.hpp"

namespace seatflow::testing {

[[nodiscard]] inline std::optional<channels::RejectReason> reason_of(
    const std::optional<channels::Rejection>& rejection) {
  return rejection ? std::optional(rejection->reason) : std::nullopt;
}

[[nodiscard]] inline std::optional<channels::RejectReason> reason_of(
    const channels::VerifyResult& result) {
  const auto* rejection = std::get_if<channels::Rejection>(&result);
  return rejection ? std::optional(rejection->reason) : std::nullopt;
}

}  // namespace seatflow::testing

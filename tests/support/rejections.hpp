// Test helper: the reason and the detail of a channel's failure, or nullopt / "" when it succeeded.
#pragma once

#include <optional>
#include <string>

#include "channels/channel.hpp"

namespace seatflow::testing {

template <class T>
[[nodiscard]] std::optional<channels::RejectReason> reason_of(const channels::Result<T>& result) {
  return result.ok() ? std::nullopt : std::optional(channels::errc_of(result.error()));
}

template <class T>
[[nodiscard]] std::string rejection_detail(const channels::Result<T>& result) {
  return result.ok() ? std::string() : result.detail();
}

}  // namespace seatflow::testing

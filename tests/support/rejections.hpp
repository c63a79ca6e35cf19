// Test helpers: what a failed Result says (its channel reason, its detail, the key it names), or
// nullopt / "" when it succeeded, so an assertion on a Result that unexpectedly holds a value fails
// instead of stopping at the Result's own assertion.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "channels/channel.hpp"

namespace seatflow::testing {

template <class T>
[[nodiscard]] std::optional<channels::RejectReason> reason_of(const channels::Result<T>& result) {
  return result.ok() ? std::nullopt : std::optional(channels::errc_of(result.error()));
}

template <class T>
[[nodiscard]] std::string rejection_detail(const domain::Result<T>& result) {
  return result.ok() ? std::string() : result.detail();
}

// The skew a `stale` failure names (channels::reject_stale); nullopt for a value or another
// failure.
template <class T>
[[nodiscard]] std::optional<std::int64_t> skew_ms_of(const channels::Result<T>& result) {
  if (result.ok() || result.error() != channels::errc::stale) {
    return std::nullopt;
  }
  return channels::stale_skew_ms(result.failure());
}

// The value a failure names under `key` ("seatId", "field"); nullopt when it names none or another.
template <class T>
[[nodiscard]] std::optional<std::string> named(const domain::Result<T>& result,
                                               std::string_view key) {
  if (result.ok() || result.named().key != key) {
    return std::nullopt;
  }
  return result.named().value;
}

}  // namespace seatflow::testing

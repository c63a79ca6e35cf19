// What codec/ reports when bytes are not what a caller asked for (a key file, an archive), as
// std::error_code values of one category ("codec") carried in a domain::Result.
#pragma once

#include <string>
#include <system_error>
#include <utility>

#include "domain/result.hpp"

namespace seatflow::codec {

// 0 is success (std::error_code's "no error"); every other value is one reason bytes were refused.
enum class errc : int {
  success = 0,
  unreadable,   // a file that cannot be read, or is larger than its kind can be
  bad_key,      // not a PEM key or certificate of the kind asked for (RSA, kMinRsaBits)
  bad_archive,  // not a zip this reader takes
};

// The "codec" category (a domain::ErrorCategory): one message per errc value.
[[nodiscard]] const std::error_category& error_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(errc value) noexcept {
  return {static_cast<int>(value), error_category()};
}

using domain::Failure;
using domain::Result;

// A refusal: its code and a log-safe detail (a path is configuration; never a key's bytes).
[[nodiscard]] inline Failure refused(errc code, std::string detail) {
  return Failure{make_error_code(code), std::move(detail), {}};
}

}  // namespace seatflow::codec

template <>
struct std::is_error_code_enum<seatflow::codec::errc> : std::true_type {};

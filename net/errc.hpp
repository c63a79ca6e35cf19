// What the outbound client reports when an exchange brings no answer, as std::error_code values
// of one category ("net") carried in a domain::Result: a caller tells "the gateway did not answer"
// from an answer by the Result, never by a status number standing in for one.
#pragma once

#include <string>
#include <system_error>
#include <utility>

#include "domain/result.hpp"

namespace seatflow::net {

// 0 is success (std::error_code's "no error"); every other value is one way an exchange failed.
enum class errc : int {
  success = 0,
  unreachable,        // the name did not resolve, or the connection or TLS handshake failed
  timed_out,          // the connect or the total deadline passed
  too_large,          // the answer is over its size bound
  cancelled,          // the caller's cancel flag turned true
  refused_by_reader,  // the body's reader (a BodySink) refused a piece
  bad_request,        // the request cannot be sent (an unsupported method)
  bad_url,            // a URL that is not an absolute http(s) URL with a host
};

// The "net" category (a domain::ErrorCategory): one message per errc value.
[[nodiscard]] const std::error_category& error_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(errc value) noexcept {
  return {static_cast<int>(value), error_category()};
}

using domain::Failure;
using domain::Result;

// An exchange's failure: its code and a log-safe detail (never a header value or a body).
[[nodiscard]] inline Failure failed(errc code, std::string detail) {
  return Failure{make_error_code(code), std::move(detail), {}};
}

}  // namespace seatflow::net

template <>
struct std::is_error_code_enum<seatflow::net::errc> : std::true_type {};

// Why the HTTP layer itself refused a request before any work, as std::error_code values of one
// category ("http"), carried in the module's domain::Result; http/status.hpp says how each is
// answered.
#pragma once

#include <cassert>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>

#include "domain/result.hpp"

namespace seatflow::http {

// 0 is success (std::error_code's "no error").
enum class errc : std::uint8_t {
  success = 0,
  bad_request,          // the body, a field, the query string or a path value is not valid
  missing_credentials,  // no bearer credentials
  bad_credentials,      // a wrong token or a JWT that does not pass (see http/auth.hpp)
  api_disabled,         // no API token configured: the API refuses everyone
};

// The "http" category (a domain::ErrorCategory): one message per errc value.
[[nodiscard]] const std::error_category& error_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(errc value) noexcept {
  return {static_cast<int>(value), error_category()};
}

// The errc of a code of this category.
[[nodiscard]] inline errc errc_of(std::error_code code) {
  assert(code.category() == error_category() && "an http error code");
  return static_cast<errc>(code.value());
}

using domain::Failure;
using domain::Named;
using domain::Result;

// A request refused before any work: answered 400 {"error": message[, "field": field]}.
[[nodiscard]] inline Failure bad_request(std::string message, std::string field = {}) {
  Named named;
  if (!field.empty()) {
    named = Named{"field", std::move(field)};
  }
  return Failure{make_error_code(errc::bad_request), std::move(message), std::move(named)};
}

}  // namespace seatflow::http

template <>
struct std::is_error_code_enum<seatflow::http::errc> : std::true_type {};

// What the persistence border reports when a store call does not do what was asked, as
// std::error_code values of one category ("persistence") carried in the module's domain::Result,
// so callers compare codes, not strings.
#pragma once

#include <string>
#include <system_error>
#include <utility>

#include "domain/result.hpp"

namespace seatflow::persistence {

// 0 is success (std::error_code's "no error"); every other value is one reason a store refused.
enum class errc : int {
  success = 0,
  pg_unavailable,     // PostgreSQL unreachable, a lost connection, a statement timeout
  redis_unavailable,  // Redis unreachable or failing (the seat store)
  deadline_exceeded,  // the caller's deadline passed before the call ran
  commit_unknown,     // the COMMIT's answer was lost: the transaction may or may not have committed
  conflict,           // the rows' state forbids the request (the result's detail says why)
  not_found,          // no such order, payment, callback or discrepancy
  already_exists,     // a unique key is taken (an id given twice)
  bad_setting,        // a store setting's text does not parse (the detail says why)
};

// The "persistence" category (a domain::ErrorCategory): one message per errc value.
[[nodiscard]] const std::error_category& error_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(errc value) noexcept {
  return {static_cast<int>(value), error_category()};
}

// True for the codes a caller answers "try again later" (the store, not the request, failed).
[[nodiscard]] bool is_unavailable(std::error_code code) noexcept;

using domain::Failure;
using domain::Named;
using domain::Result;

// A store's refusal: its code, a log-safe detail, and the key it names for the client
// ({"seatId": "A-12"}), when it names one.
[[nodiscard]] inline Failure refused(errc code, std::string detail, Named named = {}) {
  return Failure{make_error_code(code), std::move(detail), std::move(named)};
}

}  // namespace seatflow::persistence

template <>
struct std::is_error_code_enum<seatflow::persistence::errc> : std::true_type {};

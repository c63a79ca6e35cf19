// The one result shape of channels/, persistence/ and http/: a value, or the failure that stands
// in its place (a module's errc as a std::error_code, a log-safe detail, and at most one thing it
// names for its client). Outcomes that are not failures (domain::CallbackResult, a seat taken by
// another order at the commit) stay the value's own enums. Misuse (the value of a failure) is an
// assertion: a programmer error, never an exception.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace seatflow::domain {

// What a failure names for its client beside its detail, shown as one more member of a JSON
// error body: an API request's field ({"field": "amountCents"}) or the key a store refused
// ({"seatId": "A-12"}).
struct Named {
  std::string_view key;  // a string literal; empty when the failure names nothing
  std::string value;
};

// Why a call has no value.
struct Failure {
  std::error_code code;  // a module's errc, never success
  std::string detail;    // log-safe: never a secret, a body or a whole signature
  Named named;
};

template <class T>
class [[nodiscard]] Result {
  static_assert(!std::is_reference_v<T> && !std::is_same_v<std::remove_cv_t<T>, Failure>);

 public:
  using value_type = T;

  // Implicit both ways, so a function returns its value or its failure as it is.
  Result(T&& value)  // NOLINT(google-explicit-constructor)
      : state_(std::in_place_index<0>, std::move(value)) {}
  Result(const T& value)  // NOLINT(google-explicit-constructor)
      : state_(std::in_place_index<0>, value) {}
  // A value made in place from two or more parts: `return {Done::created, row};`.
  template <class A, class B, class... Rest>
  requires std::is_constructible_v<T, A&&, B&&, Rest&&...> Result(
      A&& a, B&& b, Rest&&... rest)  // NOLINT(google-explicit-constructor)
      : state_(std::in_place_index<0>, std::forward<A>(a), std::forward<B>(b),
               std::forward<Rest>(rest)...) {}
  Result(Failure failure)  // NOLINT(google-explicit-constructor)
      : state_(std::in_place_index<1>, std::move(failure)) {
    assert(std::get<1>(state_).code && "a failure carries an error code");
  }

  [[nodiscard]] static Result failure(std::error_code code, std::string detail = {},
                                      Named named = {}) {
    return Failure{code, std::move(detail), std::move(named)};
  }

  [[nodiscard]] bool ok() const noexcept { return state_.index() == 0; }

  [[nodiscard]] T& value() & {
    assert(ok() && "value() of a failure");
    return *std::get_if<0>(&state_);
  }
  [[nodiscard]] const T& value() const& {
    assert(ok() && "value() of a failure");
    return *std::get_if<0>(&state_);
  }
  [[nodiscard]] T&& value() && {
    assert(ok() && "value() of a failure");
    return std::move(*std::get_if<0>(&state_));
  }

  // The failure's code; a default (false) error_code when there is a value.
  [[nodiscard]] std::error_code error() const noexcept {
    const auto* failure = std::get_if<1>(&state_);
    return failure != nullptr ? failure->code : std::error_code{};
  }
  [[nodiscard]] const std::string& detail() const { return failure().detail; }
  [[nodiscard]] const Named& named() const { return failure().named; }

  // The whole failure, to hand on as another Result's: `return std::move(read).failure();`.
  [[nodiscard]] const Failure& failure() const& {
    assert(!ok() && "failure() of a value");
    return *std::get_if<1>(&state_);
  }
  [[nodiscard]] Failure&& failure() && {
    assert(!ok() && "failure() of a value");
    return std::move(*std::get_if<1>(&state_));
  }

 private:
  std::variant<T, Failure> state_;
};

// A call that answers nothing but whether it did what was asked.
template <>
class [[nodiscard]] Result<void> {
 public:
  using value_type = void;

  Result() = default;                                       // done
  Result(Failure failure) : failure_(std::move(failure)) {  // NOLINT(google-explicit-constructor)
    assert(failure_->code && "a failure carries an error code");
  }

  [[nodiscard]] static Result success() { return {}; }
  [[nodiscard]] static Result failure(std::error_code code, std::string detail = {},
                                      Named named = {}) {
    return Failure{code, std::move(detail), std::move(named)};
  }

  [[nodiscard]] bool ok() const noexcept { return !failure_.has_value(); }
  [[nodiscard]] std::error_code error() const noexcept {
    return failure_ ? failure_->code : std::error_code{};
  }
  [[nodiscard]] const std::string& detail() const { return failure().detail; }
  [[nodiscard]] const Named& named() const { return failure().named; }
  [[nodiscard]] const Failure& failure() const& {
    assert(!ok() && "failure() of a success");
    return *failure_;
  }
  [[nodiscard]] Failure&& failure() && {
    assert(!ok() && "failure() of a success");
    return std::move(*failure_);
  }

 private:
  std::optional<Failure> failure_;
};

}  // namespace seatflow::domain

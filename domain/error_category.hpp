// One std::error_category class for every module's errc enum (channels/errc.hpp,
// persistence/drivers/errc.hpp): a module gives its category's name and its message function, and
// keeps its own enum, make_error_code and std::is_error_code_enum specialisation.
#pragma once

#include <string>
#include <system_error>

namespace seatflow::domain {

class ErrorCategory final : public std::error_category {
 public:
  // A message for every int, the values outside the enum included.
  using MessageOf = const char* (*)(int value) noexcept;

  // `name` is a string literal: the category outlives every error_code that refers to it.
  ErrorCategory(const char* name, MessageOf message_of) noexcept
      : name_(name), message_of_(message_of) {}

  [[nodiscard]] const char* name() const noexcept override { return name_; }
  [[nodiscard]] std::string message(int value) const override { return message_of_(value); }

 private:
  const char* name_;
  MessageOf message_of_;
};

}  // namespace seatflow::domain

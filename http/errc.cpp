// The http error category: one message per errc value.
#include "http/errc.hpp"

#include "domain/error_category.hpp"

namespace seatflow::http {
namespace {

const char* errc_message(int value) noexcept {
  switch (static_cast<errc>(value)) {
    case errc::success:
      return "success";
    case errc::bad_request:
      return "bad request";
    case errc::missing_credentials:
      return "missing bearer credentials";
    case errc::bad_credentials:
      return "invalid bearer credentials";
    case errc::api_disabled:
      return "API disabled";
  }
  return "unknown http error";
}

}  // namespace

const std::error_category& error_category() noexcept {
  static const domain::ErrorCategory category("http", &errc_message);
  return category;
}

}  // namespace seatflow::http

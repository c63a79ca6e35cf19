// The net error category: one message per errc value.
#include "net/errc.hpp"

#include "domain/error_category.hpp"

namespace seatflow::net {
namespace {

const char* errc_message(int value) noexcept {
  switch (static_cast<errc>(value)) {
    case errc::success:
      return "success";
    case errc::unreachable:
      return "unreachable";
    case errc::timed_out:
      return "timed out";
    case errc::too_large:
      return "answer too large";
    case errc::cancelled:
      return "cancelled";
    case errc::refused_by_reader:
      return "body refused by its reader";
    case errc::bad_request:
      return "request cannot be sent";
    case errc::bad_url:
      return "bad URL";
  }
  return "unknown net error";
}

}  // namespace

const std::error_category& error_category() noexcept {
  static const domain::ErrorCategory category("net", &errc_message);
  return category;
}

}  // namespace seatflow::net

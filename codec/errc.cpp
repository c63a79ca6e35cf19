// The codec error category: one message per errc value.
#include "codec/errc.hpp"

#include "domain/error_category.hpp"

namespace seatflow::codec {
namespace {

const char* errc_message(int value) noexcept {
  switch (static_cast<errc>(value)) {
    case errc::success:
      return "success";
    case errc::unreadable:
      return "unreadable";
    case errc::bad_key:
      return "not a usable key";
    case errc::bad_archive:
      return "not a usable archive";
  }
  return "unknown codec error";
}

}  // namespace

const std::error_category& error_category() noexcept {
  static const domain::ErrorCategory category("codec", &errc_message);
  return category;
}

}  // namespace seatflow::codec

// The channels error category: one message per errc value.
#include "channels/errc.hpp"

#include "domain/error_category.hpp"

namespace seatflow::channels {
namespace {

const char* errc_message(int value) noexcept {
  switch (static_cast<errc>(value)) {
    case errc::success:
      return "success";
    case errc::malformed:
      return "malformed request";
    case errc::bad_status:
      return "status outside the dialect";
    case errc::bad_signature:
      return "bad signature";
    case errc::stale:
      return "stale timestamp";
    case errc::unhandled_event:
      return "unhandled event";
    case errc::unknown_channel:
      return "unknown or disabled channel";
    case errc::rejected_answer:
      return "gateway answer rejected";
    case errc::unusable:
      return "authentic but unusable content";
    case errc::bad_config:
      return "channel configuration refused";
  }
  return "unknown channels error";
}

}  // namespace

const std::error_category& error_category() noexcept {
  static const domain::ErrorCategory category("channels", &errc_message);
  return category;
}

}  // namespace seatflow::channels

// The persistence error category: one message per errc value.
#include "persistence/drivers/errc.hpp"

#include "domain/error_category.hpp"

namespace seatflow::persistence {
namespace {

const char* errc_message(int value) noexcept {
  switch (static_cast<errc>(value)) {
    case errc::success:
      return "success";
    case errc::pg_unavailable:
      return "PostgreSQL unavailable";
    case errc::redis_unavailable:
      return "Redis unavailable";
    case errc::deadline_exceeded:
      return "deadline exceeded";
    case errc::commit_unknown:
      return "commit outcome unknown";
    case errc::conflict:
      return "state conflict";
    case errc::not_found:
      return "not found";
    case errc::already_exists:
      return "already exists";
    case errc::bad_setting:
      return "bad setting";
  }
  return "unknown persistence error";
}

}  // namespace

const std::error_category& error_category() noexcept {
  static const domain::ErrorCategory category("persistence", &errc_message);
  return category;
}

bool is_unavailable(std::error_code code) noexcept {
  return code == errc::pg_unavailable || code == errc::redis_unavailable ||
         code == errc::deadline_exceeded || code == errc::commit_unknown;
}

}  // namespace seatflow::persistence

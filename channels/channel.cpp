// Header lookup for the dialects.
#include "channels/channel.hpp"

namespace seatflow::channels {

std::optional<std::string_view> header_value(const Headers* headers, std::string_view name) {
  if (headers == nullptr) {
    return std::nullopt;
  }
  const auto it = headers->find(name);
  if (it == headers->end() || it->second.empty()) {
    return std::nullopt;
  }
  return std::string_view(it->second);
}

}  // namespace seatflow::channels

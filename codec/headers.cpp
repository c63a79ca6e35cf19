// Header lookup for every reader of request headers.
#include "codec/headers.hpp"

namespace seatflow::codec {

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

}  // namespace seatflow::codec

// Bounded JSON field readers (see json_fields.hpp).
#include "codec/json_fields.hpp"

#include <limits>

namespace seatflow::codec {

using nlohmann::json;

const json* json_member(const json& object, const char* name) {
  const auto it = object.find(name);
  if (it == object.end()) {
    return nullptr;
  }
  return &*it;
}

std::optional<std::int64_t> json_int64(const json& value) {
  if (value.is_number_unsigned()) {
    const auto unsigned_value = value.get<std::uint64_t>();
    if (unsigned_value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(unsigned_value);
  }
  if (value.is_number_integer()) {
    return value.get<std::int64_t>();
  }
  return std::nullopt;
}

const std::string* json_string(const json& object, const char* name, std::size_t max_bytes) {
  const json* value = json_member(object, name);
  if (value == nullptr || !value->is_string()) {
    return nullptr;
  }
  const auto& text = value->get_ref<const std::string&>();
  return text.size() <= max_bytes ? &text : nullptr;
}

const json* json_object(const json& object, const char* name) {
  const json* value = json_member(object, name);
  return value != nullptr && value->is_object() ? value : nullptr;
}

}  // namespace seatflow::codec

// Bounded reads of fields from a parsed JSON body, shared by the JSON dialects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace seatflow::codec {

// The member `name` of `object` (which must be an object), nullptr when absent.
[[nodiscard]] const nlohmann::json* json_member(const nlohmann::json& object, const char* name);

// A JSON integer that fits int64 (an unsigned one above INT64_MAX does not); nullopt otherwise.
[[nodiscard]] std::optional<std::int64_t> json_int64(const nlohmann::json& value);

// A string member of at most `max_bytes`; nullptr when absent, not a string or too long.
[[nodiscard]] const std::string* json_string(const nlohmann::json& object, const char* name,
                                             std::size_t max_bytes);

// An object member; nullptr when absent or not an object.
[[nodiscard]] const nlohmann::json* json_object(const nlohmann::json& object, const char* name);

}  // namespace seatflow::codec

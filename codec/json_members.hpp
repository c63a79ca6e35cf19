// The top-level members of a JSON object body, read in one pass without building a document: the
// hmac dialect's reader (a storm's duplicates are parsed once each, docs/BENCHMARKS.md), the
// event relay's (each event message of the slot is read once, an array of events split into its
// elements first) and the seat lists' the statements return (persistence's json_strings).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace seatflow::codec {

// One top-level member as a parsed document would hold it: the last occurrence of its name wins.
struct JsonMember {
  enum class Kind { absent, null, string, int64, other } kind = Kind::absent;
  std::string text;        // kind string: the decoded UTF-8 text
  std::int64_t value = 0;  // kind int64: an integer (no fraction, no exponent) that fits int64
};

// Reads `body` as exactly one JSON document (RFC 8259; UTF-8 with an optional leading BOM; names
// compared after their escapes are decoded) whose top level is an object, and sets out[i] from the
// last top-level member named names[i]. Members of nested objects and arrays are not top-level.
// False for anything else: a syntax error, invalid UTF-8 or a lone surrogate escape, a number too
// large for a double, trailing content (a raw NUL byte included: nlohmann::json would stop reading
// there), or a top level that is not an object. `out` must be as
// long as `names`; its members start absent.
[[nodiscard]] bool read_json_members(std::string_view body, std::span<const std::string_view> names,
                                     std::span<JsonMember> out);

// Reads `body` as exactly one JSON document, under the same rules, whose top level is an array,
// and returns the text of each element (views into `body`), every element checked; nullopt for
// anything else.
[[nodiscard]] std::optional<std::vector<std::string_view>> json_array_elements(
    std::string_view body);

// Reads `body` as exactly one JSON document, under the same rules, whose top level is an array of
// strings, and returns them decoded; nullopt for anything else (an element of another type
// included).
[[nodiscard]] std::optional<std::vector<std::string>> json_string_array(std::string_view body);

}  // namespace seatflow::codec

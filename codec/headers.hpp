// Request headers as every layer above the socket sees them: names lower-cased by the HTTP layer,
// values as sent. Gateway dialects read them, the callback log stores the ones a replay needs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace seatflow::codec {

using Headers = std::map<std::string, std::string, std::less<>>;

// The value of header `name` (lower-case), nullopt when `headers` is null, or the header is absent
// or empty.
[[nodiscard]] std::optional<std::string_view> header_value(const Headers* headers,
                                                           std::string_view name);

}  // namespace seatflow::codec

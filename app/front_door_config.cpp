// Parses the front door's settings (see front_door_config.hpp).
#include "app/front_door_config.hpp"

#include <charconv>

namespace seatflow::app {
namespace {

// `name`'s whole number into `target` when it is set; the error line when it is not one within
// [min_value, max_value].
template <class T>
std::string read_bounded(const SettingLookup& lookup, const std::string& name, T& target,
                         T min_value, T max_value) {
  const auto raw = lookup(name);
  if (!raw) {
    return {};
  }
  T value{};
  const auto* end = raw->data() + raw->size();
  const auto [ptr, ec] = std::from_chars(raw->data(), end, value);
  if (ec != std::errc{} || ptr != end || value < min_value || value > max_value) {
    return name + "='" + *raw + "' must be a whole number in [" + std::to_string(min_value) + ", " +
           std::to_string(max_value) + "]";
  }
  target = value;
  return {};
}

}  // namespace

std::string read_front_door(const SettingLookup& lookup, http::HttpConfig& http) {
  std::string error;
  const auto check = [&error](std::string line) {
    if (error.empty()) {
      error = std::move(line);
    }
  };
  check(read_bounded<std::uint32_t>(lookup, "SEATFLOW_HEADER_TIMEOUT_MS", http.header_timeout_ms,
                                    kHeaderTimeoutMsMin, kHeaderTimeoutMsMax));
  check(read_bounded<std::size_t>(lookup, "SEATFLOW_CONNECTIONS_PER_SOURCE_MAX",
                                  http.connections_per_source_max, 1, kConnectionsPerSourceMax));
  return error;
}

}  // namespace seatflow::app

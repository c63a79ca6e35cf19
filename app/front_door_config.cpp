// Parses the front door's settings (see front_door_config.hpp).
#include "app/front_door_config.hpp"

#include <cctype>
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

// A CIDR list setting; an empty list is refused (it would refuse every source).
std::string read_ranges(const SettingLookup& lookup, const std::string& name,
                        std::optional<std::vector<http::Cidr>>& target) {
  const auto raw = lookup(name);
  if (!raw) {
    return {};
  }
  auto ranges = http::parse_cidr_list(*raw);
  if (!ranges.ok()) {
    return name + ": " + ranges.detail();
  }
  if (ranges.value().empty()) {
    return name + " is set but lists no address or CIDR range";
  }
  target = std::move(ranges).value();
  return {};
}

}  // namespace

std::string read_front_door(const SettingLookup& lookup, http::HttpConfig& http) {
  auto& door = http.front_door;
  auto& rate = door.unverified;
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
  check(read_bounded<std::uint32_t>(lookup, "SEATFLOW_UNVERIFIED_TOKENS_PER_S", rate.tokens_per_s,
                                    1, kUnverifiedRateMax));
  check(read_bounded<std::uint32_t>(lookup, "SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", rate.burst, 1,
                                    kUnverifiedBurstMax));
  check(read_bounded<std::size_t>(lookup, "SEATFLOW_RATE_SOURCES_MAX", rate.sources_max, 1,
                                  kRateSourcesMax));
  check(read_bounded<std::uint32_t>(lookup, "SEATFLOW_UNVERIFIED_PER_PROXY_TOKENS_PER_S",
                                    door.per_proxy.tokens_per_s, 1, kUnverifiedRateMax));
  check(read_bounded<std::uint32_t>(lookup, "SEATFLOW_UNVERIFIED_PER_PROXY_BURST_TOKENS_MAX",
                                    door.per_proxy.burst, 1, kUnverifiedBurstMax));
  std::optional<std::vector<http::Cidr>> proxies;
  check(read_ranges(lookup, "SEATFLOW_TRUSTED_PROXIES", proxies));
  door.trusted_proxies = proxies.value_or(std::vector<http::Cidr>{});
  for (std::size_t c = 0; c < domain::kChannelCount; ++c) {
    std::string name(domain::to_string(static_cast<domain::Channel>(c)));
    for (auto& letter : name) {
      letter = static_cast<char>(std::toupper(static_cast<unsigned char>(letter)));
    }
    check(read_ranges(lookup, "SEATFLOW_" + name + "_ALLOWED_SOURCES", door.allowed_sources[c]));
  }
  return error;
}

}  // namespace seatflow::app

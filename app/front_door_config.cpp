// Parses the front door's settings (see front_door_config.hpp).
#include "app/front_door_config.hpp"

#include <cctype>

#include "app/config_readers.hpp"

namespace seatflow::app {
namespace {

using config_readers::ConfigError;
using config_readers::read_number;

// A CIDR list setting; an empty list is refused (it would refuse every source).
void read_ranges(const SettingLookup& lookup, const std::string& name,
                 std::optional<std::vector<http::Cidr>>& target) {
  const auto raw = lookup(name);
  if (!raw) {
    return;
  }
  auto ranges = http::parse_cidr_list(*raw);
  if (!ranges.ok()) {
    throw ConfigError{name + ": " + ranges.detail()};
  }
  if (ranges.value().empty()) {
    throw ConfigError{name + " is set but lists no address or CIDR range"};
  }
  target = std::move(ranges).value();
}

}  // namespace

void read_front_door(const SettingLookup& lookup, http::HttpConfig& http) {
  auto& door = http.front_door;
  auto& rate = door.unverified;
  read_number<std::uint32_t>(lookup, "SEATFLOW_HEADER_TIMEOUT_MS", http.header_timeout_ms,
                             kHeaderTimeoutMsMin, kHeaderTimeoutMsMax);
  read_number<std::size_t>(lookup, "SEATFLOW_CONNECTIONS_PER_SOURCE_MAX",
                           http.connections_per_source_max, 1, kConnectionsPerSourceMax);
  read_number<std::uint32_t>(lookup, "SEATFLOW_UNVERIFIED_TOKENS_PER_S", rate.tokens_per_s, 1,
                             kUnverifiedRateMax);
  read_number<std::uint32_t>(lookup, "SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", rate.burst, 1,
                             kUnverifiedBurstMax);
  read_number<std::size_t>(lookup, "SEATFLOW_RATE_SOURCES_MAX", rate.sources_max, 1,
                           kRateSourcesMax);
  read_number<std::uint32_t>(lookup, "SEATFLOW_UNVERIFIED_PER_PROXY_TOKENS_PER_S",
                             door.per_proxy.tokens_per_s, 1, kUnverifiedRateMax);
  read_number<std::uint32_t>(lookup, "SEATFLOW_UNVERIFIED_PER_PROXY_BURST_TOKENS_MAX",
                             door.per_proxy.burst, 1, kUnverifiedBurstMax);
  std::optional<std::vector<http::Cidr>> proxies;
  read_ranges(lookup, "SEATFLOW_TRUSTED_PROXIES", proxies);
  door.trusted_proxies = proxies.value_or(std::vector<http::Cidr>{});
  for (std::size_t c = 0; c < domain::kChannelCount; ++c) {
    std::string name(domain::to_string(static_cast<domain::Channel>(c)));
    for (auto& letter : name) {
      letter = static_cast<char>(std::toupper(static_cast<unsigned char>(letter)));
    }
    read_ranges(lookup, "SEATFLOW_" + name + "_ALLOWED_SOURCES", door.allowed_sources[c]);
  }
}

}  // namespace seatflow::app

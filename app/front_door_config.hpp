// The front door's settings (SPEC §14, README "Limits"): the first-byte deadline, the per-source
// connection cap, trusted proxies, the unverified-traffic buckets and the per-channel allowlists.
#pragma once

#include <string>

#include "app/config.hpp"
#include "http/config.hpp"

namespace seatflow::app {

// Bounds of the front door's numeric settings (start-up refuses a value outside them).
inline constexpr std::uint32_t kHeaderTimeoutMsMin = 100;
inline constexpr std::uint32_t kHeaderTimeoutMsMax = 600'000;
inline constexpr std::size_t kConnectionsPerSourceMax = 1'000'000;
inline constexpr std::uint32_t kUnverifiedRateMax = 1'000'000;   // tokens per second
inline constexpr std::uint32_t kUnverifiedBurstMax = 1'000'000;  // tokens
inline constexpr std::size_t kRateSourcesMax = 16'777'216;       // buckets

// Reads them into `http`; throws config_readers::ConfigError naming a refused setting, as every
// setting reader of load_config does.
void read_front_door(const SettingLookup& lookup, http::HttpConfig& http);

}  // namespace seatflow::app

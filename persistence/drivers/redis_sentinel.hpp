// Redis Sentinel (SPEC §15): the settings that name the sentinels, their parsing, and the one
// place that asks them where the primary is. Blocking, each call bounded by its own timeouts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "persistence/drivers/errc.hpp"

namespace seatflow::persistence {

struct SentinelAddress {
  std::string host;
  std::uint16_t port = 26379;
};

// Limits of the sentinel settings, each defined once here.
inline constexpr std::size_t kSentinelsMax = 16;
inline constexpr std::size_t kSentinelMasterNameBytesMax = 128;
// A call to one sentinel (connect, then one command) is bounded by the client's timeout and by
// this, so a dead or frozen sentinel delays the next one in the list by at most this long.
inline constexpr std::uint32_t kSentinelCallMsMax = 1'000;

struct RedisSentinels {
  // SEATFLOW_REDIS_SENTINELS; empty: no sentinels, the URL's host is the primary.
  std::vector<SentinelAddress> addresses;
  std::string master_name = "seatflow";  // SEATFLOW_REDIS_MASTER_NAME
  // SEATFLOW_REDIS_FAILOVER_TIMEOUT_MS: how long after the sentinels' switch the engine follows;
  // a client without a primary for longer logs redis_failover_overdue once per outage.
  std::uint32_t failover_timeout_ms = 10'000;
};

// Parses "host:port,host:port,…" (an IPv6 host in brackets: "[::1]:26379"); at most
// kSentinelsMax entries; errc::bad_setting (the detail says which entry and why) on bad input.
[[nodiscard]] Result<std::vector<SentinelAddress>> parse_sentinels(std::string_view list);

// Whether a master name is one the sentinel protocol can carry (printable, no space, bounded).
[[nodiscard]] bool valid_master_name(std::string_view name);

struct PrimaryAddress {
  std::string host;
  std::uint16_t port = 0;
};

// Asks each sentinel in turn (SENTINEL get-master-addr-by-name), each call bounded by
// min(timeout_ms, kSentinelCallMsMax), and returns the first answer; errc::redis_unavailable
// (every sentinel's reason in the detail) when none named a primary.
[[nodiscard]] Result<PrimaryAddress> ask_sentinels(const RedisSentinels& sentinels,
                                                   std::uint32_t timeout_ms);

// Whether an error reply says the server is no writable primary (any more): a replica's READONLY,
// or MASTERDOWN of a replica that lost its primary. The client then asks the sentinels again.
[[nodiscard]] bool is_not_primary_reply(std::string_view error);

}  // namespace seatflow::persistence

// The Redis Sentinel settings (SPEC §15) and the one endpoint every Redis user of the process
// connects through.
#include <cassert>
#include <string>

#include "app/config.hpp"
#include "app/config_readers.hpp"

namespace seatflow::app {
namespace config_readers {

void read_redis_sentinels(const SettingLookup& lookup, Config& config) {
  auto& sentinels = config.redis_sentinels;
  if (const auto list = lookup("SEATFLOW_REDIS_SENTINELS"); list && !list->empty()) {
    auto addresses = persistence::parse_sentinels(*list);
    if (!addresses.ok()) {
      throw ConfigError{"SEATFLOW_REDIS_SENTINELS " + addresses.detail()};
    }
    sentinels.addresses = std::move(addresses).value();
  }
  if (const auto name = lookup("SEATFLOW_REDIS_MASTER_NAME")) {
    if (!persistence::valid_master_name(*name)) {
      throw ConfigError{"SEATFLOW_REDIS_MASTER_NAME must be 1 to " +
                        std::to_string(persistence::kSentinelMasterNameBytesMax) +
                        " printable bytes without spaces"};
    }
    sentinels.master_name = *name;
  }
  read_number<std::uint32_t>(lookup, "SEATFLOW_REDIS_FAILOVER_TIMEOUT_MS",
                             sentinels.failover_timeout_ms, 1'000, 600'000);
  auto& relay = config.engine.event_relay.relay;
  // With sentinels a published event must be on a replica before the slot lets it go: the
  // replica may be the next primary.
  relay.replicas_ack = sentinels.addresses.empty() ? 0 : 1;
  read_number<std::uint32_t>(lookup, "SEATFLOW_REDIS_REPLICAS_ACK", relay.replicas_ack, 0, 16);
  if (relay.replicas_ack > 0 && config.engine.store.redis_timeout_ms <= relay.replicas_wait_ms) {
    throw ConfigError{"SEATFLOW_REDIS_TIMEOUT_MS must exceed " +
                      std::to_string(relay.replicas_wait_ms) +
                      " ms (the relay's WAIT) when SEATFLOW_REDIS_REPLICAS_ACK is above 0"};
  }
}

}  // namespace config_readers

persistence::RedisEndpoint redis_endpoint(const Config& config) {
  auto endpoint = persistence::parse_redis_url(config.redis_url);
  assert(endpoint.ok() && "redis_endpoint needs the URL load_config accepted");
  endpoint.value().sentinels = config.redis_sentinels;
  return std::move(endpoint).value();
}

}  // namespace seatflow::app

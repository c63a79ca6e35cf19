// What the subcommands share: the flag-or-environment lookup, the configuration they load, the
// stop signals and the tools' Redis client.
#include "app/cli.hpp"

#include <pthread.h>

#include <cstdlib>
#include <iostream>

namespace seatflow::app {

SettingLookup make_lookup(const CliOverrides& overrides) {
  return [&overrides](const std::string& name) -> std::optional<std::string> {
    if (const auto it = overrides.values.find(name); it != overrides.values.end()) {
      return it->second;
    }
    if (const char* value = std::getenv(name.c_str())) {
      return std::string(value);
    }
    return std::nullopt;
  };
}

std::optional<Config> load_for_command(const CliOverrides& overrides, bool require_stores) {
  auto result = load_config(make_lookup(overrides), require_stores);
  if (!result.config) {
    std::cerr << "seatflow: configuration error: " << result.error << '\n';
  }
  return result.config;
}

sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

std::string wal_level_refusal(const std::string& level) {
  return "event=startup_refused setting=wal_level value=" + level +
         " required=logical message=\"SeatFlow reads its payment events from the WAL: set "
         "wal_level = logical in postgresql.conf and restart PostgreSQL\"";
}

std::unique_ptr<persistence::RedisClient> tool_redis(const Config& config) {
  return std::make_unique<persistence::RedisClient>(redis_endpoint(config),
                                                    config.engine.store.redis_timeout_ms, nullptr);
}

}  // namespace seatflow::app

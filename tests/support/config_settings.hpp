// Loads the engine configuration from a map of settings instead of the environment (unit tests).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "app/config.hpp"

namespace seatflow::testing {

using Settings = std::map<std::string, std::string>;

// load_config over `settings`, without requiring PostgreSQL/Redis settings.
inline app::ConfigResult load_settings(const Settings& settings) {
  return app::load_config(
      [&settings](const std::string& name) -> std::optional<std::string> {
        const auto it = settings.find(name);
        if (it == settings.end()) {
          return std::nullopt;
        }
        return it->second;
      },
      false);
}

}  // namespace seatflow::testing

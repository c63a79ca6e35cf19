// The persistence layer's logger: its lines carry module=persistence (observability/logger.hpp).
#pragma once

#include "observability/logger.hpp"

namespace seatflow::persistence {

[[nodiscard]] inline spdlog::logger& logger() {
  static spdlog::logger& tagged = observability::logger("persistence");
  return tagged;
}

}  // namespace seatflow::persistence

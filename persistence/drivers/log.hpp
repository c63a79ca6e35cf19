// The persistence layer's logger: its lines carry module=persistence (observability/logger.hpp).
#pragma once

#include "observability/logger.hpp"

namespace seatflow::persistence {

// Request-derived values are written through quoted_value() (SPEC §14: logs that parse).
using observability::quoted_value;

[[nodiscard]] inline spdlog::logger& logger() {
  static spdlog::logger& tagged = observability::logger("persistence");
  return tagged;
}

}  // namespace seatflow::persistence

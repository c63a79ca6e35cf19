// The actors layer's logger: its lines carry module=actors (observability/logger.hpp).
#pragma once

#include "observability/logger.hpp"

namespace seatflow::actors {

// Request-derived values are written through quoted_value() (SPEC §14: logs that parse).
using observability::quoted_value;

[[nodiscard]] inline spdlog::logger& logger() {
  static spdlog::logger& tagged = observability::logger("actors");
  return tagged;
}

}  // namespace seatflow::actors

// The http layer's logger: its lines carry module=http (observability/logger.hpp).
#pragma once

#include "observability/logger.hpp"

namespace seatflow::http {

// Request-derived values are written through quoted_value() (SPEC §14: logs that parse).
using observability::quoted_value;

[[nodiscard]] inline spdlog::logger& logger() {
  static spdlog::logger& tagged = observability::logger("http");
  return tagged;
}

}  // namespace seatflow::http

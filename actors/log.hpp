// The actors layer's logger: its lines carry module=actors (observability/logger.hpp).
#pragma once

#include "observability/logger.hpp"

namespace seatflow::actors {

[[nodiscard]] inline spdlog::logger& logger() {
  static spdlog::logger& tagged = observability::logger("actors");
  return tagged;
}

}  // namespace seatflow::actors

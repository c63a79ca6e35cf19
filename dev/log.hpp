// The dev tooling's logger: its lines carry module=dev (observability/logger.hpp).
#pragma once

#include "observability/logger.hpp"

namespace seatflow::dev {

[[nodiscard]] inline spdlog::logger& logger() {
  static spdlog::logger& tagged = observability::logger("dev");
  return tagged;
}

}  // namespace seatflow::dev

// Structured logging set-up: one line per event, key=value fields, never a secret or a signature.
#pragma once

#include <string>

namespace seatflow::app {

void init_logging(const std::string& level);

}  // namespace seatflow::app

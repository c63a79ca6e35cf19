// Module-tagged loggers: one named spdlog logger per layer, all writing through the process's
// sinks at its level, with a pattern that prints the module name before each `event=...` line.
#pragma once

#include <spdlog/logger.h>

#include <string>

namespace seatflow::observability {

// The line format: time, level, module, then the event's own `event=... key=value` text.
inline constexpr const char* kLogPattern = "%Y-%m-%dT%H:%M:%S.%e%z level=%l module=%n %v";

// The logger of `module` ("persistence", "http", ...), created on first use from the default
// logger's sinks and level. The reference stays valid for the life of the process: a layer may
// keep it in a function-local static.
[[nodiscard]] spdlog::logger& logger(const std::string& module);

// Points the default logger and every module logger (those made so far and those made later) at
// one stderr sink with kLogPattern and `level` (SEATFLOW_LOG_LEVEL). Called once, by main, before
// the engine's threads start.
void init_logging(const std::string& level);

}  // namespace seatflow::observability

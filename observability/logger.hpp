// Module-tagged loggers: one named spdlog logger per layer, all writing through the process's
// sinks at its level, with a pattern that prints the module name before each `event=...` line;
// and the one escaping function for values that came from a request.
#pragma once

#include <spdlog/logger.h>

#include <string>
#include <string_view>

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

// `text` as one double-quoted log value that a key=value parser reads back exactly (SPEC §14):
// every value that came from a request (ids, paths, gateway answers, error texts) goes through
// this. JSON escapes for `"`, `\`, newline, carriage return and tab; `\uXXXX` (a surrogate pair
// above U+FFFF) for the other C0 and C1 controls (U+0085 among them), DEL, the line and paragraph
// separators U+2028/2029, every other Unicode space but U+0020, the invisible format characters
// (zero widths, bidirectional marks and overrides, word joiners, BOM, tags) and the
// noncharacters; `\xNN` for a byte that is not part of well-formed UTF-8. So the quoted value
// holds no byte a reader could take for a line end, a field separator or a closing quote.
[[nodiscard]] std::string quoted_value(std::string_view text);

}  // namespace seatflow::observability

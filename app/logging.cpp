// Configures spdlog's default logger for the engine: timestamped lines on stderr.
#include "app/logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace seatflow::app {

void init_logging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("seatflow");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z level=%l %v");
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

}  // namespace seatflow::app

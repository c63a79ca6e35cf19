// Module loggers live in spdlog's registry under their module's name; they are never dropped, so a
// reference handed out stays valid.
#include "observability/logger.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <mutex>

namespace seatflow::observability {
namespace {

std::mutex& loggers_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

spdlog::logger& logger(const std::string& module) {
  const std::lock_guard lock(loggers_mutex());
  if (auto existing = spdlog::get(module)) {
    return *existing;
  }
  auto created = spdlog::default_logger()->clone(module);
  spdlog::register_logger(created);
  return *created;
}

void init_logging(const std::string& level) {
  const std::lock_guard lock(loggers_mutex());
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  sink->set_pattern(kLogPattern);
  const auto parsed = spdlog::level::from_str(level);
  auto process = std::make_shared<spdlog::logger>("seatflow", sink);
  process->set_level(parsed);
  process->flush_on(spdlog::level::warn);
  // Loggers made before this call (none in serve; a tool may log while loading) get the new sink.
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& made) {
    made->sinks().assign(1, sink);
    made->set_level(parsed);
    made->flush_on(spdlog::level::warn);
  });
  spdlog::set_default_logger(process);
}

}  // namespace seatflow::observability

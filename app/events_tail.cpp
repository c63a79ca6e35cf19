// XREAD loop of `seatflow events tail`.
#include "app/events_tail.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ostream>
#include <thread>

namespace seatflow::app {
namespace {

// Entries per XREAD: bounds the memory of one reply.
constexpr std::size_t kReadCount = 100;
constexpr auto kRetryDelay = std::chrono::seconds(1);

// One stream entry (id, [field, value, …]) as a JSON object; amount_cents as a number.
nlohmann::json entry_json(const persistence::RedisReply& entry) {
  nlohmann::json out = nlohmann::json::object();
  out["stream_id"] = entry.elements[0].str;
  const auto& fields = entry.elements[1].elements;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
    const auto& name = fields[i].str;
    const auto& value = fields[i + 1].str;
    if (name == "amount_cents") {
      try {
        out[name] = std::stoll(value);
        continue;
      } catch (const std::exception&) {
        // Not a number after all: printed as the string it is.
      }
    }
    out[name] = value;
  }
  return out;
}

}  // namespace

int run_events_tail(const TailOptions& options, const persistence::RedisEndpoint& endpoint,
                    const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  // The client timeout must outlast the server-side BLOCK of one read.
  persistence::RedisClient redis(endpoint, options.block_ms + 5'000, nullptr);
  std::string last_id = options.from;
  std::size_t printed = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    const auto want =
        options.count == 0 ? kReadCount : std::min(kReadCount, options.count - printed);
    std::vector<std::string> cmd = {"XREAD", "COUNT", std::to_string(want)};
    if (!options.once) {
      cmd.insert(cmd.end(), {"BLOCK", std::to_string(options.block_ms)});
    }
    cmd.insert(cmd.end(), {"STREAMS", options.stream, last_id});
    const auto reply = redis.command(cmd);
    if (!reply.ok) {
      err << "seatflow: events tail: redis: " << reply.error << '\n';
      if (options.once) {
        return 1;
      }
      std::this_thread::sleep_for(kRetryDelay);
      continue;
    }
    const bool empty = reply.is_nil || reply.elements.empty() ||
                       reply.elements[0].elements.size() < 2 ||
                       reply.elements[0].elements[1].elements.empty();
    if (empty) {
      if (options.once) {
        return 0;
      }
      continue;
    }
    for (const auto& entry : reply.elements[0].elements[1].elements) {
      if (entry.elements.size() < 2) {
        continue;
      }
      out << entry_json(entry).dump() << '\n';
      last_id = entry.elements[0].str;
      ++printed;
    }
    out.flush();
    if (options.count != 0 && printed >= options.count) {
      return 0;
    }
  }
  return 0;
}

}  // namespace seatflow::app

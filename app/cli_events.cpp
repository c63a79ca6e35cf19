// `seatflow events tail`: the payment events on the Redis Stream, until SIGINT/SIGTERM.
#include <atomic>
#include <csignal>
#include <iostream>

#include "app/cli.hpp"

namespace seatflow::app {
namespace {

// Set by SIGINT/SIGTERM while `events tail` runs; the loop reads it between reads.
std::atomic<bool> g_stop_tail{false};

void request_tail_stop(int /*signal*/) {
  g_stop_tail.store(true, std::memory_order_relaxed);
}

}  // namespace

int cli_events_tail(const CliOverrides& overrides, TailOptions options) {
  const auto config = load_for_command(overrides, false);
  if (!config) {
    return 2;
  }
  if (config->redis_url.empty()) {
    std::cerr << "seatflow: configuration error: SEATFLOW_REDIS_URL is not set\n";
    return 2;
  }
  const auto endpoint = redis_endpoint(*config);
  options.stream = config->engine.event_relay.relay.stream;
  struct sigaction action {};
  action.sa_handler = request_tail_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return run_events_tail(options, endpoint, g_stop_tail, std::cout, std::cerr);
}

}  // namespace seatflow::app

// `seatflow serve`: wires the engine, the channels and the HTTP front from the configuration,
// serves until SIGINT/SIGTERM, then stops within SEATFLOW_SHUTDOWN_TIMEOUT_MS.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "actors/engine.hpp"
#include "app/cli.hpp"
#include "app/config.hpp"
#include "http/extra_routes.hpp"

namespace seatflow::app {

// What a library outside the core (dev/: the mock gateway) adds to a serving engine. The server
// binary supplies it (app/main.cpp), so no core library links that library.
struct ServeExtension {
  std::vector<actors::ExtraActor> actors;  // spawned and supervised by the engine
  // The HTTP front's extra routes, asked for once the engine runs (the engine outlives them).
  std::function<http::ExtraRoutes(actors::Engine& engine)> routes;
  // Told where the server listens, once it does.
  std::function<void(actors::Engine& engine, const std::string& host, std::uint16_t port)>
      listening;
};

// The extension for a configuration, or nullopt for none; asked once, before the engine starts.
using ServeExtender = std::function<std::optional<ServeExtension>(const Config& config)>;

// Exit codes: 0 after a stop by signal, 1 when the address cannot be bound, 2 for a configuration
// the engine must not start with, 3 when the stop outlived SEATFLOW_SHUTDOWN_TIMEOUT_MS, 4 after a
// core actor died.
[[nodiscard]] int run_serve(const CliOverrides& overrides, const ServeExtender& extend);

}  // namespace seatflow::app

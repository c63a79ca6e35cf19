// Routes requests: the payment notify endpoint, the authenticated API, health, readiness, metrics,
// the operations console, and the extra routes registered at wiring time (http/extra_routes.hpp).
#pragma once

#include <atomic>
#include <chrono>

#include "actors/engine.hpp"
#include "channels/registry.hpp"
#include "http/api_routes.hpp"
#include "http/config.hpp"
#include "http/front_door.hpp"
#include "http/probe.hpp"
#include "http/types.hpp"

namespace seatflow::http {

class HttpServer;

// The raw request of a verified callback as the log keeps it: its body, and of its headers only
// those `channel` reads (SPEC §12).
[[nodiscard]] std::shared_ptr<const domain::RawRequest> keep_raw(const channels::Channel& channel,
                                                                 HttpRequest&& request);

// Maps a callback outcome to the channel's reply: status code, ACK or failure body, Retry-After.
[[nodiscard]] HttpResponse callback_reply(const channels::Channel& channel,
                                          const domain::CallbackOutcome& outcome);

class ApiHandler final : public RequestHandler {
 public:
  // `extra`: routes a library outside the core adds (none by default).
  ApiHandler(const HttpConfig& http, const ApiSettings& api, actors::Engine& engine,
             const channels::Registry& channels, HttpProbe& probe, observability::Registry& metrics,
             ExtraRoutes extra = {});

  void handle(HttpRequest&& request, Respond respond) override;
  // Lets /metrics report open connections; set once the server exists.
  void attach_server(const HttpServer* server) { server_ = server; }
  [[nodiscard]] std::size_t inflight() const { return inflight_->load(); }

 private:
  void notify(std::string_view channel_name, HttpRequest&& request, Respond respond);
  void metrics(Respond respond);

  std::size_t inflight_max_;
  actors::Engine& engine_;
  OrdersApi orders_api_;
  const channels::Registry& channels_;
  HttpProbe& probe_;
  FrontDoor front_door_;              // allowlists and unverified-traffic buckets of the notifies
  observability::Registry& metrics_;  // serialised by /metrics
  const HttpServer* server_ = nullptr;
  // The extra routes outside the API (ExtraRoutes::open); empty when none were registered.
  std::function<bool(const HttpRequest&, std::string_view, Respond&)> extra_open_;
  // Shared with reply callbacks, which may run after a request's session is gone.
  std::shared_ptr<std::atomic<std::size_t>> inflight_;
};

}  // namespace seatflow::http

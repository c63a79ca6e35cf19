// Routes requests: health, readiness, metrics and the payment notify endpoint.
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
  ApiHandler(const HttpConfig& http, const ApiSettings& api, actors::Engine& engine,
             const channels::Registry& channels, HttpProbe& probe,
             observability::Registry& metrics);

  void handle(HttpRequest&& request, Respond respond) override;
  // Lets /metrics report open connections; set once the server exists.
  void attach_server(const HttpServer* server) { server_ = server; }
  [[nodiscard]] std::size_t inflight() const { return inflight_->load(); }

 private:
  void notify(std::string_view channel_name, HttpRequest&& request, Respond respond);
  void metrics(Respond respond);
  // GET /api/gateway/payments/<paymentNo> of the dev mock gateway (SPEC §10): 200 with a signed §5
  // body when it settled the payment, 202 while it did not, 404 when the mock gateway is off.
  [[nodiscard]] HttpResponse mock_gateway_query(std::string_view payment_no) const;
  // POST /api/gateway/refunds of the dev mock gateway: a signed refund request answered signed,
  // succeeded when it settled the payment as paid, refused otherwise; 404 when it is off.
  [[nodiscard]] HttpResponse mock_gateway_refund(const HttpRequest& request) const;

  std::size_t inflight_max_;
  actors::Engine& engine_;
  OrdersApi orders_api_;
  const channels::Registry& channels_;
  HttpProbe& probe_;
  FrontDoor front_door_;              // allowlists and unverified-traffic buckets of the notifies
  observability::Registry& metrics_;  // serialised by /metrics
  const HttpServer* server_ = nullptr;
  // The callback secrets and window the mock gateway signs with (empty unless it is on).
  std::vector<std::string> mock_secrets_;
  std::int64_t mock_window_ms_ = 0;
  // Shared with reply callbacks, which may run after a request's session is gone.
  std::shared_ptr<std::atomic<std::size_t>> inflight_;
};

}  // namespace seatflow::http

// The authenticated orders/payments API (SPEC §7): request validation and dispatch to API actors.
#pragma once

#include <atomic>
#include <memory>
#include <string_view>
#include <vector>

#include "actors/engine.hpp"
#include "channels/registry.hpp"
#include "http/auth.hpp"
#include "http/config.hpp"
#include "http/types.hpp"

namespace seatflow::http {

class OrdersApi {
 public:
  OrdersApi(const ApiSettings& settings, std::size_t max_inflight, actors::Engine& engine,
            const channels::Registry& channels);

  // Answers every /api/ path except the notify path (the caller routes that).
  void handle(HttpRequest&& request, std::string_view path, Respond respond);

 private:
  void create_order(const HttpRequest& request, Respond& respond);
  void create_payment(const HttpRequest& request, Respond& respond);
  void mock_pay(const HttpRequest& request, Respond& respond);
  // Hands `delivery` to the mock gateway; `respond` answers with the notify endpoint's reply.
  // POST /api/payments/{paymentNo}/sync: asks the gateway now (SPEC §10) and answers the payment.
  void sync_payment(const std::string& payment_no, Respond& respond);
  void mock_send(actors::MockDelivery delivery, const Respond& respond);
  void payment_action(std::string_view method, std::string_view rest, Respond& respond);
  void list_discrepancies(std::string_view query, Respond& respond);
  void resolve_discrepancy(std::string_view id_text, Respond& respond);
  // POST /api/discrepancies/{id}/refund: the money back through the payment's gateway (SPEC §12).
  void refund_discrepancy(std::string_view id_text, Respond& respond);
  // The routes of the callback log and the timeline (SPEC §12), matched by a table; `args` are
  // the percent-decoded `{}` segments of the route's pattern.
  using RouteArgs = std::vector<std::string>;
  using RouteHandler = void (OrdersApi::*)(const RouteArgs& args, std::string_view query,
                                           Respond& respond);
  struct RouteSpec {
    std::string_view method;
    std::string_view pattern;  // "/api/callbacks/{}/replay": each {} matches one segment
    RouteHandler handler;
  };
  static const std::vector<RouteSpec>& route_table();
  // True when a table route matched (and answered or dispatched).
  bool handle_table(std::string_view method, std::string_view path, std::string_view query,
                    Respond& respond);
  void search_callbacks(const RouteArgs& args, std::string_view query, Respond& respond);
  void get_callback(const RouteArgs& args, std::string_view query, Respond& respond);
  void replay_callback(const RouteArgs& args, std::string_view query, Respond& respond);
  void payment_timeline(const RouteArgs& args, std::string_view query, Respond& respond);
  // Runs `job` on an API actor unless too many API requests are in flight (then 503).
  void dispatch(Respond respond, std::function<void(persistence::OrderStore&, const Respond&)> job);

  Authenticator auth_;
  actors::Engine& engine_;
  ApiSettings settings_;
  std::size_t inflight_max_;
  const channels::Registry& channels_;
  std::shared_ptr<std::atomic<std::size_t>> inflight_;
};

// A JSON error body: {"error": message[, "field": field]}.
[[nodiscard]] HttpResponse json_error(int status, std::string_view message,
                                      std::string_view field = {});

}  // namespace seatflow::http

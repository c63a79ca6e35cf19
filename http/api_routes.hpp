// The authenticated orders/payments API (SPEC §7): one route table for every /api/ path the caller
// hands it (and the extra routes registered at wiring time after it), request validation, and
// dispatch to API actors. The handlers live by resource: http/api_orders.cpp (orders, payments),
// http/api_discrepancies.cpp, http/api_callbacks.cpp (the callback log and the timeline),
// http/api_bills.cpp (bill runs).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "actors/engine.hpp"
#include "channels/registry.hpp"
#include "http/api_request.hpp"
#include "http/auth.hpp"
#include "http/config.hpp"
#include "http/extra_routes.hpp"
#include "http/types.hpp"

namespace seatflow::http {

// One matched request: the request, its query string and the percent-decoded `{param}` segments
// of the route's pattern, in pattern order.
struct ApiCall {
  const HttpRequest& request;
  std::string_view query;
  std::vector<std::string> args;
};

class OrdersApi {
 public:
  // `extra` adds its API routes after the route table, and hears of each payment created.
  OrdersApi(const ApiSettings& settings, std::size_t max_inflight, actors::Engine& engine,
            const channels::Registry& channels, ExtraRoutes extra);

  // Answers every /api/ path except the notify path (the caller routes that).
  void handle(HttpRequest&& request, std::string_view path, Respond respond);

  // A handler answers through `respond`, or returns the failure (http::errc::bad_request, a 400)
  // that refused the request before any work (then `respond` was not used).
  using Handler = Result<void> (OrdersApi::*)(const ApiCall& call, Respond& respond);
  // A path that matches a route's pattern but none of its methods is answered 405 with Allow.
  struct Route {
    std::string_view method;
    std::string_view pattern;  // "/api/callbacks/{callbackId}/replay": {name} is one segment
    Handler handler;
  };
  static const std::vector<Route>& route_table();

  // Runs `job` on an API actor unless too many API requests are in flight (then 503).
  void dispatch(Respond respond, std::function<void(persistence::OrderStore&, const Respond&)> job);
  // Runs `work` (a call outside the API actors, e.g. to a gateway) in one of the API's in-flight
  // slots, or answers `respond` 503 when none is free. The slot is given back as the answer goes
  // out through the Respond `work` is handed (from any thread, once).
  void run_in_slot(const Respond& respond, const std::function<void(Respond answer)>& work);

 private:
  // The route for `method` and `path` with its arguments, or the 404/405 answer.
  void route(const HttpRequest& request, std::string_view path, std::string_view query,
             Respond& respond);

  // http/api_orders.cpp
  Result<void> create_order(const ApiCall& call, Respond& respond);
  Result<void> get_order(const ApiCall& call, Respond& respond);
  Result<void> create_payment(const ApiCall& call, Respond& respond);
  Result<void> get_payment(const ApiCall& call, Respond& respond);
  // POST /api/payments/{paymentNo}/close: closed at the gateway first (SPEC §16), or with
  // {"force": true} here only.
  Result<void> close_payment(const ApiCall& call, Respond& respond);
  // SPEC §16: the payment just written (or found again) created at its gateway.
  void create_at_gateway(const persistence::Stored<persistence::PaymentRow>& stored,
                         const Respond& respond);
  // The local close, or the answer that the gateway did not confirm it.
  void after_gateway_close(const std::string& payment_no, const actors::GatewayAnswer& answer,
                           const Respond& respond);
  Result<void> refund_payment(const ApiCall& call, Respond& respond);
  // POST /api/payments/{paymentNo}/sync: asks the gateway now (SPEC §10) and answers the payment.
  Result<void> sync_payment(const ApiCall& call, Respond& respond);
  // http/api_discrepancies.cpp
  Result<void> list_discrepancies(const ApiCall& call, Respond& respond);
  Result<void> resolve_discrepancy(const ApiCall& call, Respond& respond);
  // POST /api/discrepancies/{id}/refund: the money back through the payment's gateway (SPEC §12).
  Result<void> refund_discrepancy(const ApiCall& call, Respond& respond);
  // http/api_callbacks.cpp
  Result<void> search_callbacks(const ApiCall& call, Respond& respond);
  Result<void> get_callback(const ApiCall& call, Respond& respond);
  Result<void> replay_callback(const ApiCall& call, Respond& respond);
  Result<void> payment_timeline(const ApiCall& call, Respond& respond);

  // http/api_bills.cpp (SPEC §13)
  Result<void> start_bill_run(const ApiCall& call, Respond& respond);
  Result<void> list_bill_runs(const ApiCall& call, Respond& respond);
  Result<void> get_bill_run(const ApiCall& call, Respond& respond);
  Result<void> bill_run_items(const ApiCall& call, Respond& respond);

  // Takes one of the API's in-flight slots for work outside the API actors (a gateway call);
  // false, with `respond` answered 503, when none is free.
  bool take_slot(Respond& respond);
  // What answers a request whose slot was taken when the actor asked gives no typed reply (it is
  // gone, or the engine is stopping): the slot back and 503, as for any work the engine drops.
  [[nodiscard]] actors::AskFailedFn unanswered(const Respond& respond) const;

  Authenticator auth_;
  actors::Engine& engine_;
  ApiSettings settings_;
  std::size_t inflight_max_;
  const channels::Registry& channels_;
  std::vector<ExtraApiRoute> extra_routes_;
  std::function<void(const persistence::PaymentRow&)> payment_created_;
  std::shared_ptr<std::atomic<std::size_t>> inflight_;
};

// A JSON error body: {"error": message}.
[[nodiscard]] HttpResponse json_error(int status, std::string_view message);

// Matches `path` against a route pattern; fills the decoded `{name}` segments. A segment that is
// empty or has a broken percent-escape matches no `{name}`.
[[nodiscard]] bool match_pattern(std::string_view pattern, std::string_view path,
                                 std::vector<std::string>& args);

}  // namespace seatflow::http

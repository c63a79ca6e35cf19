// Routes a library outside the core adds to the HTTP front at wiring time (dev/: the mock
// gateway). The core never names them: with none registered, their paths are answered as any
// other unknown path.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "http/api_request.hpp"
#include "http/types.hpp"
#include "persistence/stores/order_store.hpp"

namespace seatflow::http {

class OrdersApi;
struct ApiCall;

// An authenticated /api/ route, matched after the core's route table. A path that matches its
// pattern with another method is answered 404, as the older core routes answer it. The handler
// answers through `respond`, or returns the failure (http::errc::bad_request, a 400) that refused
// the request before any work; it may
// use `api`'s dispatch and run_in_slot, so its work shares the API's in-flight bound.
struct ExtraApiRoute {
  std::string method;
  std::string pattern;  // as in OrdersApi::Route: {name} is one segment
  std::function<Result<void>(OrdersApi& api, const ApiCall& call, Respond& respond)> handler;
};

struct ExtraRoutes {
  // Routes outside the API (no bearer token), tried before every core route but the notify path:
  // true when `path` (the target without its query) is one of them, and `respond` was used.
  std::function<bool(const HttpRequest& request, std::string_view path, Respond& respond)> open;
  std::vector<ExtraApiRoute> api;
  // Told of each payment the API created, once it is committed, on an API actor's thread; it must
  // not block.
  std::function<void(const persistence::PaymentRow& payment)> payment_created;
};

}  // namespace seatflow::http

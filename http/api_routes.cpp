// The API's front: the bearer token, the one route table of every /api/ route, and the in-flight
// bound every handler's work shares. Handlers validate first (a 400 is returned, not thrown) and
// move `respond` only when they dispatch.
#include "http/api_routes.hpp"

#include <chrono>

#include "http/routing.hpp"

namespace seatflow::http {
namespace {

using nlohmann::json;

std::int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The next "/segment" of `text` without its slash; `text` moves past it. False when `text` does
// not start with a slash.
bool next_segment(std::string_view& text, std::string_view& segment) {
  if (text.empty() || text[0] != '/') {
    return false;
  }
  text.remove_prefix(1);
  const auto end = text.find('/');
  segment = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view{} : text.substr(end);
  return true;
}

}  // namespace

HttpResponse json_error(int status, std::string_view message) {
  return json_response(status, {{"error", message}});
}

bool match_pattern(std::string_view pattern, std::string_view path,
                   std::vector<std::string>& args) {
  args.clear();
  while (!pattern.empty() || !path.empty()) {
    std::string_view p_seg;
    std::string_view s_seg;
    if (!next_segment(pattern, p_seg) || !next_segment(path, s_seg)) {
      return false;
    }
    if (p_seg.starts_with('{') && p_seg.ends_with('}')) {
      auto decoded = percent_decode(s_seg, false);
      if (s_seg.empty() || !decoded || decoded->empty()) {
        return false;
      }
      args.push_back(std::move(*decoded));
    } else if (p_seg != s_seg) {
      return false;
    }
  }
  return true;
}

const std::vector<OrdersApi::Route>& OrdersApi::route_table() {
  static const std::vector<Route> table = {
      {"POST", "/api/orders", &OrdersApi::create_order},
      {"GET", "/api/orders/{orderNo}", &OrdersApi::get_order},
      {"POST", "/api/payments", &OrdersApi::create_payment},
      {"GET", "/api/payments/{paymentNo}", &OrdersApi::get_payment},
      {"POST", "/api/payments/{paymentNo}/close", &OrdersApi::close_payment},
      {"POST", "/api/payments/{paymentNo}/refund", &OrdersApi::refund_payment},
      {"POST", "/api/payments/{paymentNo}/sync", &OrdersApi::sync_payment},
      {"GET", "/api/payments/{paymentNo}/timeline", &OrdersApi::payment_timeline},
      {"GET", "/api/discrepancies", &OrdersApi::list_discrepancies},
      {"POST", "/api/discrepancies/{id}/resolve", &OrdersApi::resolve_discrepancy},
      {"POST", "/api/discrepancies/{id}/refund", &OrdersApi::refund_discrepancy},
      {"GET", "/api/callbacks", &OrdersApi::search_callbacks},
      {"GET", "/api/callbacks/{callbackId}", &OrdersApi::get_callback},
      {"POST", "/api/callbacks/{callbackId}/replay", &OrdersApi::replay_callback},
      {"POST", "/api/bill-runs", &OrdersApi::start_bill_run},
      {"GET", "/api/bill-runs", &OrdersApi::list_bill_runs},
      {"GET", "/api/bill-runs/{id}", &OrdersApi::get_bill_run},
      {"GET", "/api/bill-runs/{id}/items", &OrdersApi::bill_run_items},
  };
  return table;
}

OrdersApi::OrdersApi(const ApiSettings& settings, std::size_t max_inflight, actors::Engine& engine,
                     const channels::Registry& channels, ExtraRoutes extra)
    : auth_(settings.auth),
      engine_(engine),
      settings_(settings),
      inflight_max_(max_inflight),
      channels_(channels),
      extra_routes_(std::move(extra.api)),
      payment_created_(std::move(extra.payment_created)),
      inflight_(std::make_shared<std::atomic<std::size_t>>(0)) {}

bool OrdersApi::take_slot(Respond& respond) {
  if (inflight_->fetch_add(1, std::memory_order_relaxed) >= inflight_max_) {
    inflight_->fetch_sub(1, std::memory_order_relaxed);
    respond(json_error(503, "overloaded"));
    return false;
  }
  return true;
}

actors::AskFailedFn OrdersApi::unanswered(const Respond& respond) const {
  return [respond, inflight = inflight_](const caf::error& /*why*/) {
    inflight->fetch_sub(1, std::memory_order_relaxed);
    respond(json_error(503, "unavailable: the engine gave no answer"));
  };
}

void OrdersApi::dispatch(Respond respond,
                         std::function<void(persistence::OrderStore&, const Respond&)> job) {
  if (!take_slot(respond)) {
    return;
  }
  engine_.run_api({[job = std::move(job), respond = std::move(respond),
                    inflight = inflight_](persistence::OrderStore& store) {
    inflight->fetch_sub(1, std::memory_order_relaxed);
    job(store, respond);
  }});
}

void OrdersApi::run_in_slot(const Respond& respond, const std::function<void(Respond)>& work) {
  Respond answer = respond;
  if (!take_slot(answer)) {
    return;
  }
  work([respond, inflight = inflight_](HttpResponse response) {
    inflight->fetch_sub(1, std::memory_order_relaxed);
    respond(std::move(response));
  });
}

void OrdersApi::handle(HttpRequest&& request, std::string_view path, Respond respond) {
  const auto header = request.headers.find("authorization");
  const auto auth = auth_.check(header == request.headers.end() ? "" : header->second, now_s());
  if (!auth.ok()) {
    auto refusal = json_error(auth.failure());
    // RFC 9110 §11.6.1 and RFC 6750 §3: the scheme, and why a credential that was sent failed.
    refusal.headers.emplace_back("WWW-Authenticate", auth.error() == errc::bad_credentials
                                                         ? R"(Bearer error="invalid_token")"
                                                         : "Bearer");
    respond(std::move(refusal));
    return;
  }
  const std::string_view target = request.target;
  const auto query_start = target.find('?');
  const auto query =
      query_start == std::string_view::npos ? std::string_view{} : target.substr(query_start + 1);
  route(request, path, query, respond);
}

void OrdersApi::route(const HttpRequest& request, std::string_view path, std::string_view query,
                      Respond& respond) {
  ApiCall call{request, query, {}};
  std::string allow;  // the methods of the routes whose pattern matches (RFC 9110 §15.5.6)
  for (const auto& route : route_table()) {
    if (!match_pattern(route.pattern, path, call.args)) {
      continue;
    }
    if (route.method == request.method) {
      if (const auto handled = (this->*route.handler)(call, respond); !handled.ok()) {
        respond(json_error(handled.failure()));
      }
      return;
    }
    allow.append(allow.empty() ? "" : ", ").append(route.method == "GET" ? kAllowGet : kAllowPost);
  }
  for (const auto& route : extra_routes_) {
    if (match_pattern(route.pattern, path, call.args) && route.method == request.method) {
      if (const auto handled = route.handler(*this, call, respond); !handled.ok()) {
        respond(json_error(handled.failure()));
      }
      return;
    }
  }
  if (!allow.empty()) {
    auto refusal = json_error(405, "method not allowed");
    refusal.headers.emplace_back("Allow", std::move(allow));
    respond(std::move(refusal));
    return;
  }
  respond(json_error(404, "not found"));
}

}  // namespace seatflow::http

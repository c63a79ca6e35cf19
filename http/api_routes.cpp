// The API's front: the bearer token, the one route table of every /api/ route, and the in-flight
// bound every handler's work shares. Handlers validate first (a 400 is returned, not thrown) and
// move `respond` only when they dispatch.
#include "http/api_routes.hpp"

#include <chrono>

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
  using enum OtherMethod;
  static const std::vector<Route> table = {
      {"POST", "/api/orders", &OrdersApi::create_order, not_found},
      {"GET", "/api/orders/{orderNo}", &OrdersApi::get_order, not_found},
      {"POST", "/api/payments", &OrdersApi::create_payment, not_found},
      {"GET", "/api/payments/{paymentNo}", &OrdersApi::get_payment, not_found},
      {"POST", "/api/payments/{paymentNo}/close", &OrdersApi::close_payment, not_found},
      {"POST", "/api/payments/{paymentNo}/refund", &OrdersApi::refund_payment, not_found},
      {"POST", "/api/payments/{paymentNo}/sync", &OrdersApi::sync_payment, not_found},
      {"GET", "/api/payments/{paymentNo}/timeline", &OrdersApi::payment_timeline, not_allowed},
      {"GET", "/api/discrepancies", &OrdersApi::list_discrepancies, not_found},
      {"POST", "/api/discrepancies/{id}/resolve", &OrdersApi::resolve_discrepancy, not_found},
      {"POST", "/api/discrepancies/{id}/refund", &OrdersApi::refund_discrepancy, not_found},
      {"GET", "/api/callbacks", &OrdersApi::search_callbacks, not_allowed},
      {"GET", "/api/callbacks/{callbackId}", &OrdersApi::get_callback, not_allowed},
      {"POST", "/api/callbacks/{callbackId}/replay", &OrdersApi::replay_callback, not_allowed},
      {"POST", "/api/mock-gateway/pay", &OrdersApi::mock_pay, not_found, true},
  };
  return table;
}

OrdersApi::OrdersApi(const ApiSettings& settings, std::size_t max_inflight, actors::Engine& engine,
                     const channels::Registry& channels)
    : auth_(settings.auth),
      engine_(engine),
      settings_(settings),
      inflight_max_(max_inflight),
      channels_(channels),
      inflight_(std::make_shared<std::atomic<std::size_t>>(0)) {}

bool OrdersApi::take_slot(Respond& respond) {
  if (inflight_->fetch_add(1, std::memory_order_relaxed) >= inflight_max_) {
    inflight_->fetch_sub(1, std::memory_order_relaxed);
    respond(json_error(503, "overloaded"));
    return false;
  }
  return true;
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

void OrdersApi::handle(HttpRequest&& request, std::string_view path, Respond respond) {
  const auto header = request.headers.find("authorization");
  const auto auth = auth_.check(header == request.headers.end() ? "" : header->second, now_s());
  if (!auth.ok()) {
    respond(json_error(auth.failure()));
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
  bool other_method_not_allowed = false;
  for (const auto& route : route_table()) {
    if (route.mock_gateway_only && !settings_.mock_gateway.enabled) {
      continue;
    }
    if (!match_pattern(route.pattern, path, call.args)) {
      continue;
    }
    if (route.method == request.method) {
      if (const auto handled = (this->*route.handler)(call, respond); !handled.ok()) {
        respond(json_error(handled.failure()));
      }
      return;
    }
    other_method_not_allowed |= route.other_method == OtherMethod::not_allowed;
  }
  if (other_method_not_allowed) {
    respond(json_error(405, "method not allowed"));
    return;
  }
  respond(json_error(404, "not found"));
}

}  // namespace seatflow::http

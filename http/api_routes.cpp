// Orders/payments API: validate the JSON shape here (400 names the field), do the work in an API
// actor (blocking store calls never run on an io thread), map the store's answer to a status.
#include "http/api_routes.hpp"

#include <charconv>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

namespace seatflow::http {
namespace {

using nlohmann::json;
using persistence::StoreResult;
using persistence::StoreStatus;

constexpr std::size_t kMaxIdBytes = 128;
constexpr std::size_t kMaxSeatsPerOrder = 64;
constexpr std::int64_t kMaxAmountCents = 1'000'000'000'000;
constexpr std::size_t kMaxDiscrepancyPage = 500;
constexpr std::string_view kDiscrepancyPrefix = "/api/discrepancies/";

struct BadRequest {
  std::string message;
  std::string field;
};

std::int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

HttpResponse json_response(int status, const json& body) {
  HttpResponse response{status, "application/json", body.dump(), {}};
  if (status == 503) {
    response.headers.emplace_back("Retry-After", "1");
  }
  return response;
}

HttpResponse from_store(const StoreResult& result) {
  int status = 503;
  switch (result.status) {
    case StoreStatus::ok:
    case StoreStatus::already:
      status = 200;
      break;
    case StoreStatus::created:
      status = 201;
      break;
    case StoreStatus::not_found:
      status = 404;
      break;
    case StoreStatus::conflict:
      status = 409;
      break;
    case StoreStatus::unavailable:
      status = 503;
      break;
  }
  if (status >= 400) {
    json body = result.body.is_object() ? result.body : json::object();
    body["error"] = result.detail;
    return json_response(status, body);
  }
  return json_response(status, result.body);
}

// Ids go into Redis keys and hash tags: a strict alphabet keeps them unambiguous.
bool valid_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes) {
    return false;
  }
  for (const char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.' || c == ':';
    if (!ok) {
      return false;
    }
  }
  return true;
}

json parse_body(const HttpRequest& request) {
  auto body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    throw BadRequest{"body must be a JSON object", ""};
  }
  return body;
}

std::string id_field(const json& body, const char* field, bool required) {
  if (!body.contains(field)) {
    if (required) {
      throw BadRequest{std::string(field) + " is required", field};
    }
    return {};
  }
  if (!body[field].is_string() || !valid_id(body[field].get<std::string>())) {
    throw BadRequest{std::string(field) + " must be 1-128 characters of [A-Za-z0-9_.:-]", field};
  }
  return body[field].get<std::string>();
}

persistence::NewOrder parse_order(const json& body, std::int64_t timeout_ms) {
  persistence::NewOrder order;
  order.show_id = id_field(body, "showId", true);
  order.user_id = id_field(body, "userId", true);
  order.order_no = id_field(body, "orderNo", false);
  const auto& seats = body.value("seatIds", json());
  if (!seats.is_array() || seats.empty() || seats.size() > kMaxSeatsPerOrder) {
    throw BadRequest{"seatIds must be an array of 1-64 seat ids", "seatIds"};
  }
  std::set<std::string> seen;
  for (const auto& seat : seats) {
    if (!seat.is_string() || !valid_id(seat.get<std::string>()) ||
        !seen.insert(seat.get<std::string>()).second) {
      throw BadRequest{"seatIds must hold distinct ids of [A-Za-z0-9_.:-]", "seatIds"};
    }
    order.seat_ids.push_back(seat.get<std::string>());
  }
  const auto& amount = body.value("amountCents", json());
  if (!amount.is_number_integer() || amount.get<std::int64_t>() <= 0 ||
      amount.get<std::int64_t>() > kMaxAmountCents) {
    throw BadRequest{"amountCents must be a positive whole number of minor units", "amountCents"};
  }
  order.amount_cents = amount.get<std::int64_t>();
  order.timeout_ms = timeout_ms;
  return order;
}

std::int64_t discrepancy_id(std::string_view id_text) {
  std::int64_t id = 0;
  const auto [ptr, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (ec != std::errc{} || ptr != id_text.data() + id_text.size() || id <= 0) {
    throw BadRequest{"discrepancy id must be a positive whole number", "id"};
  }
  return id;
}

int http_status(actors::RefundStatus status) {
  switch (status) {
    case actors::RefundStatus::refunded:
      return 200;
    case actors::RefundStatus::not_found:
      return 404;
    case actors::RefundStatus::conflict:
      return 409;
    case actors::RefundStatus::gateway_failed:
      return 502;
    case actors::RefundStatus::unavailable:
      return 503;
  }
  return 503;
}

std::string_view query_value(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    if (pair.starts_with(key) && pair.size() > key.size() && pair[key.size()] == '=') {
      return pair.substr(key.size() + 1);
    }
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
  }
  return {};
}

}  // namespace

HttpResponse json_error(int status, std::string_view message, std::string_view field) {
  json body = {{"error", message}};
  if (!field.empty()) {
    body["field"] = field;
  }
  return json_response(status, body);
}

OrdersApi::OrdersApi(const ApiSettings& settings, std::size_t max_inflight, actors::Engine& engine)
    : auth_(settings.auth),
      engine_(engine),
      settings_(settings),
      inflight_max_(max_inflight),
      inflight_(std::make_shared<std::atomic<std::size_t>>(0)) {}

void OrdersApi::dispatch(Respond respond,
                         std::function<void(persistence::OrderStore&, const Respond&)> job) {
  if (inflight_->fetch_add(1, std::memory_order_relaxed) >= inflight_max_) {
    inflight_->fetch_sub(1, std::memory_order_relaxed);
    respond(json_error(503, "overloaded"));
    return;
  }
  engine_.run_api({[job = std::move(job), respond = std::move(respond),
                    inflight = inflight_](persistence::OrderStore& store) {
    inflight->fetch_sub(1, std::memory_order_relaxed);
    job(store, respond);
  }});
}

void OrdersApi::handle(HttpRequest&& request, std::string_view path, Respond respond) {
  // Handlers validate first and move `respond` only when they dispatch, so a BadRequest thrown
  // by validation can still be answered here.
  const auto header = request.headers.find("authorization");
  const auto auth = auth_.check(header == request.headers.end() ? "" : header->second, now_s());
  if (auth != AuthResult::ok) {
    respond(json_error(401, auth == AuthResult::disabled ? "API disabled: no SEATFLOW_API_TOKEN"
                                                         : "missing or invalid bearer token"));
    return;
  }
  const std::string_view target = request.target;
  const auto query_start = target.find('?');
  const auto query =
      query_start == std::string_view::npos ? std::string_view{} : target.substr(query_start + 1);
  const auto& method = request.method;
  try {
    if (path == "/api/orders" && method == "POST") {
      create_order(request, respond);
    } else if (path == "/api/payments" && method == "POST") {
      create_payment(request, respond);
    } else if (path == "/api/discrepancies" && method == "GET") {
      list_discrepancies(query, respond);
    } else if (path.starts_with(kDiscrepancyPrefix) && method == "POST") {
      const auto rest = path.substr(kDiscrepancyPrefix.size());
      const auto slash = rest.find('/');
      const auto action =
          slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
      if (action == "resolve") {
        resolve_discrepancy(rest.substr(0, slash), respond);
      } else if (action == "refund") {
        refund_discrepancy(rest.substr(0, slash), respond);
      } else {
        respond(json_error(404, "not found"));
      }
    } else if (path.starts_with("/api/payments/")) {
      payment_action(method, path.substr(14), respond);
    } else if (path.starts_with("/api/orders/") && method == "GET") {
      const std::string order_no(path.substr(12));
      dispatch(std::move(respond), [order_no](auto& store, const Respond& reply) {
        reply(from_store(store.get_order(order_no)));
      });
    } else if (path == "/api/mock-gateway/pay" && method == "POST" &&
               settings_.mock_gateway.enabled) {
      mock_pay(request, respond);
    } else {
      respond(json_error(404, "not found"));
    }
  } catch (const BadRequest& bad) {
    respond(json_error(400, bad.message, bad.field));
  }
}

void OrdersApi::create_order(const HttpRequest& request, Respond& respond) {
  auto order = parse_order(parse_body(request), settings_.order_timeout_ms);
  dispatch(std::move(respond), [order = std::move(order)](auto& store, const Respond& reply) {
    reply(from_store(store.create_order(order)));
  });
}

void OrdersApi::create_payment(const HttpRequest& request, Respond& respond) {
  const auto body = parse_body(request);
  persistence::NewPayment payment;
  payment.order_no = id_field(body, "orderNo", true);
  payment.payment_no = id_field(body, "paymentNo", false);
  payment.channel = body.value("channel", json()).is_string() ? body["channel"].get<std::string>()
                                                              : std::string();
  if (!domain::parse_channel(payment.channel)) {
    throw BadRequest{"channel must be hmac, alipay, wechat, stripe or standard", "channel"};
  }
  const bool auto_mock = settings_.mock_gateway.enabled && settings_.mock_gateway.auto_pay &&
                         payment.channel == domain::to_string(settings_.mock_gateway.channel);
  const auto delay_ms = settings_.mock_gateway.delay_ms;
  dispatch(std::move(respond),
           [this, payment, auto_mock, delay_ms](auto& store, const Respond& reply) {
             const auto result = store.create_payment(payment);
             // Only after the commit: the callback must never arrive before the payment is visible.
             if (result.status == StoreStatus::created && auto_mock) {
               engine_.mock_deliver({result.body["paymentNo"].template get<std::string>(),
                                     1,
                                     delay_ms,
                                     {},
                                     result.body.value("amountCents", std::int64_t{0})});
             }
             reply(from_store(result));
           });
}

void OrdersApi::payment_action(std::string_view method, std::string_view rest, Respond& respond) {
  const auto slash = rest.find('/');
  const std::string payment_no(rest.substr(0, slash));
  const auto action = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  if (action.empty() && method == "GET") {
    dispatch(std::move(respond), [payment_no](auto& store, const Respond& reply) {
      reply(from_store(store.get_payment(payment_no)));
    });
  } else if (action == "close" && method == "POST") {
    dispatch(std::move(respond), [payment_no](auto& store, const Respond& reply) {
      reply(from_store(store.close_payment(payment_no)));
    });
  } else if (action == "refund" && method == "POST") {
    dispatch(std::move(respond), [payment_no](auto& store, const Respond& reply) {
      reply(from_store(store.refund_payment(payment_no)));
    });
  } else if (action == "sync" && method == "POST") {
    sync_payment(payment_no, respond);
  } else {
    respond(json_error(404, "not found"));
  }
}

void OrdersApi::list_discrepancies(std::string_view query, Respond& respond) {
  const bool open_only = query_value(query, "open") != "false";
  std::size_t limit = 100;
  if (const auto text = query_value(query, "limit"); !text.empty()) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
    if (ec != std::errc{} || ptr != text.data() + text.size() || limit == 0 ||
        limit > kMaxDiscrepancyPage) {
      throw BadRequest{"limit must be a whole number from 1 to 500", "limit"};
    }
  }
  dispatch(std::move(respond), [open_only, limit](auto& store, const Respond& reply) {
    reply(from_store(store.list_discrepancies(open_only, limit)));
  });
}

void OrdersApi::resolve_discrepancy(std::string_view id_text, Respond& respond) {
  const auto id = discrepancy_id(id_text);
  dispatch(std::move(respond), [id](auto& store, const Respond& reply) {
    reply(from_store(store.resolve_discrepancy(id)));
  });
}

void OrdersApi::refund_discrepancy(std::string_view id_text, Respond& respond) {
  const auto id = discrepancy_id(id_text);
  // A refund holds the refund actor for one gateway call: it shares the API's in-flight bound.
  if (inflight_->fetch_add(1, std::memory_order_relaxed) >= inflight_max_) {
    inflight_->fetch_sub(1, std::memory_order_relaxed);
    respond(json_error(503, "overloaded"));
    return;
  }
  engine_.refund_discrepancy(
      {id, [respond = std::move(respond), inflight = inflight_](const actors::RefundRun& run) {
         inflight->fetch_sub(1, std::memory_order_relaxed);
         const int status = http_status(run.status);
         if (status == 200 || (status == 502 && run.body.is_object() && !run.body.empty())) {
           respond(json_response(status, run.body));
           return;
         }
         respond(json_error(status, run.detail));
       }});
}

void OrdersApi::mock_pay(const HttpRequest& request, Respond& respond) {
  const auto body = parse_body(request);
  const auto payment_no = id_field(body, "paymentNo", true);
  if (!body.contains("success") || !body["success"].is_boolean()) {
    throw BadRequest{"success must be true or false", "success"};
  }
  const int status = body["success"].get<bool>() ? 1 : 2;
  if (body.contains("notify") && !body["notify"].is_boolean()) {
    throw BadRequest{"notify must be true or false", "notify"};
  }
  if (!body.value("notify", true)) {
    // SPEC §10: settled at the mock gateway, the callback lost; only a query finds it.
    engine_.mock_book()->settle(payment_no, status);
    respond(json_response(200, {{"paymentNo", payment_no},
                                {"settled", status == 1 ? "paid" : "failed"},
                                {"notify", false}}));
    return;
  }
  if (settings_.mock_gateway.channel != domain::Channel::hmac) {
    // The stripe and standard dialects carry the amount: the mock reads it from the payment first.
    dispatch(std::move(respond), [this, payment_no, status](auto& store, const Respond& reply) {
      // An unknown payment is still delivered (amount 0): the notify path answers its 404, as it
      // does for the hmac dialect.
      const auto payment = store.get_payment(payment_no);
      const auto amount = payment.status == StoreStatus::ok
                              ? payment.body.value("amountCents", std::int64_t{0})
                              : std::int64_t{0};
      mock_send({payment_no, status, 0, {}, amount}, reply);
    });
    return;
  }
  mock_send({payment_no, status, 0, {}, 0}, respond);
}

void OrdersApi::sync_payment(const std::string& payment_no, Respond& respond) {
  // A sync holds the query actor for one gateway call: it shares the API's in-flight bound.
  if (inflight_->fetch_add(1, std::memory_order_relaxed) >= inflight_max_) {
    inflight_->fetch_sub(1, std::memory_order_relaxed);
    respond(json_error(503, "overloaded"));
    return;
  }
  engine_.sync_payment(
      {payment_no, [this, payment_no, respond = std::move(respond), inflight = inflight_](
                       bool known, const actors::QueryRun& run) {
         inflight->fetch_sub(1, std::memory_order_relaxed);
         if (!known) {
           respond(json_error(404, "unknown payment"));
           return;
         }
         json query = {{"result", actors::to_string(run.result)}};
         if (!run.detail.empty()) {
           query["detail"] = run.detail;
         }
         if (run.outcome) {
           query["outcome"] = domain::to_string(run.outcome->result);
         }
         // The payment as it is after the answer was applied.
         dispatch(respond, [payment_no, query](auto& store, const Respond& reply) {
           auto answer = from_store(store.get_payment(payment_no));
           auto body = json::parse(answer.body, nullptr, false);
           if (body.is_object()) {
             body["query"] = query;
             answer.body = body.dump();
           }
           reply(std::move(answer));
         });
       }});
}

void OrdersApi::mock_send(actors::MockDelivery delivery, const Respond& respond) {
  // On-demand deliveries share the API's in-flight bound: each holds the mock gateway for a POST.
  if (inflight_->fetch_add(1, std::memory_order_relaxed) >= inflight_max_) {
    inflight_->fetch_sub(1, std::memory_order_relaxed);
    respond(json_error(503, "overloaded"));
    return;
  }
  delivery.done = [respond, inflight = inflight_](const std::string& callback_id, int http_status,
                                                  const std::string& text) {
    inflight->fetch_sub(1, std::memory_order_relaxed);
    const json answer = {
        {"callbackId", callback_id}, {"notifyStatus", http_status}, {"notifyBody", text}};
    respond(json_response(http_status == 0 ? 502 : 200, answer));
  };
  engine_.mock_deliver(std::move(delivery));
}

}  // namespace seatflow::http

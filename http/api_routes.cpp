// Orders/payments API: validate the JSON shape here (400 names the field), do the work in an API
// actor (blocking store calls never run on an io thread), map the store's answer to a status.
#include "http/api_routes.hpp"

#include "channels/text.hpp"
#include "http/status.hpp"

#include <array>
#include <charconv>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "persistence/callback_log.hpp"

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

// RFC 3986 percent-decoding of one query value or path segment ('+' is a space in a query);
// nullopt for a broken escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%') {
      if (i + 2 >= text.size()) {
        return std::nullopt;
      }
      const int high = channels::hex_digit_value(text[i + 1]);
      const int low = channels::hex_digit_value(text[i + 2]);
      if (high < 0 || low < 0) {
        return std::nullopt;
      }
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (text[i] == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// The query parameters of a request, decoded; a parameter outside `known`, a repeated one or a
// broken escape is a 400 naming it.
std::map<std::string, std::string, std::less<>> parse_query(
    std::string_view query, std::span<const std::string_view> known) {
  std::map<std::string, std::string, std::less<>> params;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) {
      continue;
    }
    const auto eq = pair.find('=');
    const auto name = percent_decode(pair.substr(0, eq), true);
    const auto value = percent_decode(
        eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1), true);
    if (!name || std::find(known.begin(), known.end(), *name) == known.end()) {
      const auto shown = name ? *name : std::string(pair.substr(0, eq));
      throw BadRequest{"unknown query parameter " + shown.substr(0, kMaxIdBytes),
                       shown.substr(0, kMaxIdBytes)};
    }
    if (!value) {
      throw BadRequest{*name + " has a broken percent-escape", *name};
    }
    if (!params.emplace(*name, *value).second) {
      throw BadRequest{*name + " is given more than once", *name};
    }
  }
  return params;
}

// A search value (payment, order or callback id): what gateways send is not bound to the API's
// id alphabet, so any text without control characters, at most kMaxIdBytes.
std::string filter_text(const std::map<std::string, std::string, std::less<>>& params,
                        const char* name) {
  const auto it = params.find(name);
  if (it == params.end() || it->second.empty()) {
    return {};
  }
  const bool control = std::any_of(it->second.begin(), it->second.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (it->second.size() > kMaxIdBytes || control) {
    throw BadRequest{std::string(name) + " must be 1-128 characters without control characters",
                     name};
  }
  return it->second;
}

bool is_leap(int year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

// RFC 3339 date-time with an explicit offset: YYYY-MM-DDTHH:MM[:SS[.frac]](Z|±HH:MM), every field
// in range, so PostgreSQL never refuses what passes here.
bool valid_rfc3339(std::string_view t) {
  const auto digits = [&](std::size_t at, std::size_t n, int& value) {
    if (at + n > t.size()) {
      return false;
    }
    value = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') {
        return false;
      }
      value = value * 10 + (t[i] - '0');
    }
    return true;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (t.size() > 40 || !digits(0, 4, year) || t.size() < 16 || t[4] != '-' ||
      !digits(5, 2, month) || t[7] != '-' || !digits(8, 2, day) || t[10] != 'T' ||
      !digits(11, 2, hour) || t[13] != ':' || !digits(14, 2, minute)) {
    return false;
  }
  std::size_t at = 16;
  if (at < t.size() && t[at] == ':') {
    if (!digits(at + 1, 2, second)) {
      return false;
    }
    at += 3;
    if (at < t.size() && t[at] == '.') {
      std::size_t n = 0;
      while (at + 1 + n < t.size() && t[at + 1 + n] >= '0' && t[at + 1 + n] <= '9') {
        ++n;
      }
      if (n == 0 || n > 9) {
        return false;
      }
      at += 1 + n;
    }
  }
  constexpr std::array<int, 12> kDays{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 1970 || month < 1 || month > 12 || day < 1 ||
      day > kDays[static_cast<std::size_t>(month - 1)] + (month == 2 && is_leap(year) ? 1 : 0) ||
      hour > 23 || minute > 59 || second > 59) {
    return false;
  }
  if (at + 1 == t.size() && t[at] == 'Z') {
    return true;
  }
  int off_h = 0, off_m = 0;
  return at + 6 == t.size() && (t[at] == '+' || t[at] == '-') && digits(at + 1, 2, off_h) &&
         t[at + 3] == ':' && digits(at + 4, 2, off_m) && off_h < 24 && off_m < 60;
}

// Matches `path` against a table pattern; fills the decoded `{}` segments.
bool match_pattern(std::string_view pattern, std::string_view path,
                   std::vector<std::string>& args) {
  args.clear();
  while (!pattern.empty() || !path.empty()) {
    if (pattern.empty() || path.empty() || pattern[0] != '/' || path[0] != '/') {
      return false;
    }
    pattern.remove_prefix(1);
    path.remove_prefix(1);
    const auto p_end = pattern.find('/');
    const auto s_end = path.find('/');
    const auto p_seg = pattern.substr(0, p_end);
    const auto s_seg = path.substr(0, s_end);
    if (p_seg == "{}") {
      auto decoded = percent_decode(s_seg, false);
      if (s_seg.empty() || !decoded || decoded->empty()) {
        return false;
      }
      args.push_back(std::move(*decoded));
    } else if (p_seg != s_seg) {
      return false;
    }
    pattern = p_end == std::string_view::npos ? std::string_view{} : pattern.substr(p_end);
    path = s_end == std::string_view::npos ? std::string_view{} : path.substr(s_end);
  }
  return true;
}

std::string path_id(const std::string& id, const char* name) {
  const bool control = std::any_of(id.begin(), id.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (id.size() > kMaxIdBytes || control) {
    throw BadRequest{std::string(name) + " must be 1-128 characters without control characters",
                     name};
  }
  return id;
}

}  // namespace

HttpResponse json_error(int status, std::string_view message, std::string_view field) {
  json body = {{"error", message}};
  if (!field.empty()) {
    body["field"] = field;
  }
  return json_response(status, body);
}

OrdersApi::OrdersApi(const ApiSettings& settings, std::size_t max_inflight, actors::Engine& engine,
                     const channels::Registry& channels)
    : auth_(settings.auth),
      engine_(engine),
      settings_(settings),
      inflight_max_(max_inflight),
      channels_(channels),
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
    if (handle_table(method, path, query, respond)) {
      return;
    }
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

const std::vector<OrdersApi::RouteSpec>& OrdersApi::route_table() {
  static const std::vector<RouteSpec> table = {
      {"GET", "/api/callbacks", &OrdersApi::search_callbacks},
      {"GET", "/api/callbacks/{}", &OrdersApi::get_callback},
      {"POST", "/api/callbacks/{}/replay", &OrdersApi::replay_callback},
      {"GET", "/api/payments/{}/timeline", &OrdersApi::payment_timeline},
  };
  return table;
}

bool OrdersApi::handle_table(std::string_view method, std::string_view path, std::string_view query,
                             Respond& respond) {
  RouteArgs args;
  bool path_matched = false;
  for (const auto& route : route_table()) {
    if (!match_pattern(route.pattern, path, args)) {
      continue;
    }
    path_matched = true;
    if (route.method == method) {
      (this->*route.handler)(args, query, respond);
      return true;
    }
  }
  if (path_matched) {
    respond(json_error(405, "method not allowed"));
    return true;
  }
  return false;
}

void OrdersApi::search_callbacks(const RouteArgs& /*args*/, std::string_view query,
                                 Respond& respond) {
  static constexpr std::array<std::string_view, 9> kKnown = {
      "paymentNo", "orderNo", "callbackId", "channel", "result", "from", "to", "limit", "cursor"};
  const auto params = parse_query(query, kKnown);
  persistence::CallbackFilter filter;
  filter.payment_no = filter_text(params, "paymentNo");
  filter.order_no = filter_text(params, "orderNo");
  filter.callback_id = filter_text(params, "callbackId");
  if (const auto it = params.find("channel"); it != params.end() && !it->second.empty()) {
    if (!domain::parse_channel(it->second)) {
      throw BadRequest{"channel must be hmac, alipay, wechat, stripe or standard", "channel"};
    }
    filter.channel = it->second;
  }
  if (const auto it = params.find("result"); it != params.end() && !it->second.empty()) {
    // The classes a log row records (a first delivery's), and "duplicate": rows with copies.
    static constexpr std::array<std::string_view, 4> kResults = {"applied", "ignored",
                                                                 "discrepancy", "duplicate"};
    if (std::find(kResults.begin(), kResults.end(), it->second) == kResults.end()) {
      throw BadRequest{"result must be applied, ignored, discrepancy or duplicate", "result"};
    }
    filter.result = it->second;
  }
  for (const auto* name : {"from", "to"}) {
    const auto it = params.find(name);
    if (it == params.end() || it->second.empty()) {
      continue;
    }
    if (!valid_rfc3339(it->second)) {
      throw BadRequest{
          std::string(name) + " must be an RFC 3339 time with an offset, e.g. 2026-12-01T18:00:00Z",
          name};
    }
    (std::string_view(name) == "from" ? filter.from : filter.to) = it->second;
  }
  if (const auto it = params.find("limit"); it != params.end()) {
    const auto& text = it->second;
    std::size_t limit = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
    if (ec != std::errc{} || ptr != text.data() + text.size() || limit == 0 ||
        limit > persistence::kCallbackPageMax) {
      throw BadRequest{
          "limit must be a whole number from 1 to " + std::to_string(persistence::kCallbackPageMax),
          "limit"};
    }
    filter.limit = limit;
  }
  if (const auto it = params.find("cursor"); it != params.end() && !it->second.empty()) {
    filter.cursor = persistence::parse_cursor(it->second);
    if (!filter.cursor || filter.cursor->callback_id.size() > kMaxIdBytes) {
      throw BadRequest{"cursor must be a nextCursor this API answered", "cursor"};
    }
  }
  dispatch(std::move(respond), [filter = std::move(filter)](auto& store, const Respond& reply) {
    persistence::CallbackLogStore log(store.session());
    reply(from_store(log.search(filter)));
  });
}

void OrdersApi::get_callback(const RouteArgs& args, std::string_view /*query*/, Respond& respond) {
  const auto callback_id = path_id(args.at(0), "callbackId");
  dispatch(std::move(respond), [callback_id](auto& store, const Respond& reply) {
    persistence::CallbackLogStore log(store.session());
    reply(from_store(log.get(callback_id)));
  });
}

void OrdersApi::payment_timeline(const RouteArgs& args, std::string_view /*query*/,
                                 Respond& respond) {
  const auto payment_no = path_id(args.at(0), "paymentNo");
  dispatch(std::move(respond), [payment_no](auto& store, const Respond& reply) {
    persistence::CallbackLogStore log(store.session());
    reply(from_store(log.timeline(payment_no, store)));
  });
}

void OrdersApi::replay_callback(const RouteArgs& args, std::string_view /*query*/,
                                Respond& respond) {
  const auto callback_id = path_id(args.at(0), "callbackId");
  dispatch(std::move(respond), [this, callback_id](auto& store, const Respond& reply) {
    persistence::CallbackLogStore log(store.session());
    auto status = persistence::StoreStatus::unavailable;
    auto stored = log.stored_request(callback_id, status);
    if (!stored) {
      reply(status == persistence::StoreStatus::not_found
                ? json_error(404, "unknown callback, or one logged without its raw request")
                : json_error(503, "storage unavailable"));
      return;
    }
    const auto* channel = channels_.find(stored->channel);
    if (channel == nullptr) {
      reply(json_error(409, "channel " + stored->channel + " is not enabled on this engine"));
      return;
    }
    // The same verification as the notify path, with today's keys; only the freshness window is
    // waived, because this replay is authenticated by the API token (SPEC §12).
    const channels::InboundRequest inbound{stored->body, &stored->headers, now_s() * 1000, true};
    auto verified = channel->verify(inbound);
    if (auto* rejection = std::get_if<channels::Rejection>(&verified)) {
      const bool signature = rejection->reason == channels::RejectReason::bad_signature ||
                             rejection->reason == channels::RejectReason::stale;
      const auto result = rejection->reason == channels::RejectReason::unhandled_event
                              ? domain::CallbackResult::ignored
                          : signature ? domain::CallbackResult::rejected_signature
                                      : domain::CallbackResult::rejected_param;
      reply(json_response(200, {{"callbackId", callback_id},
                                {"result", domain::to_string(result)},
                                {"httpStatus", http_status(rejection->reason)},
                                {"detail", rejection->detail}}));
      return;
    }
    auto callback = std::move(std::get<domain::VerifiedCallback>(verified));
    callback.raw = std::make_shared<domain::RawRequest>(
        domain::RawRequest{stored->body, {stored->headers.begin(), stored->headers.end()}});
    // The same pipeline: the router and the payment actor, so an applied callback answers
    // `duplicate` and a new outcome is applied exactly once.
    engine_.submit(std::move(callback), [reply,
                                         callback_id](const domain::CallbackOutcome& outcome) {
      json body = {{"callbackId", callback_id},
                   {"result", domain::to_string(outcome.result)},
                   {"httpStatus", domain::http_status(outcome.result)}};
      if (!outcome.detail.empty()) {
        body["detail"] = outcome.detail;
      }
      reply(json_response(outcome.result == domain::CallbackResult::unavailable ? 503 : 200, body));
    });
  });
}

}  // namespace seatflow::http

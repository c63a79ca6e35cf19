// The mock gateway's wiring and routes: what the API and the gateway-side endpoints answer, the
// deliveries they hand to the mock gateway actor through the engine.
#include "dev/mock_gateway.hpp"

#include <utility>

#include "channels/hmac/hmac_payment.hpp"
#include "channels/hmac/hmac_query.hpp"
#include "channels/hmac/hmac_refund.hpp"
#include "channels/query.hpp"
#include "domain/clock.hpp"
#include "http/api_request.hpp"

namespace seatflow::dev {
namespace {

using nlohmann::json;

http::HttpResponse plain(int status, std::string body) {
  return {status, "text/plain", std::move(body), {}};
}

// The paths under which every path is the mock's own: another one there is 404, not the core's.
bool under_own_prefix(std::string_view path) {
  for (const std::string_view prefix :
       {channels::kHmacCreatePath, std::string_view("/api/mock-gateway/checkout")}) {
    if (path == prefix || (path.starts_with(prefix) && path[prefix.size()] == '/')) {
      return true;
    }
  }
  return false;
}

}  // namespace

http::HttpResponse delivered_response(const MockDelivered& delivered) {
  if (delivered.verdict != MockVerdict::send) {
    // Closed or expired at the mock: it takes no payment, and nothing was sent.
    return http::json_error(409, to_string(delivered.verdict));
  }
  // No answer from the engine's notify endpoint: the mock says so as a gateway would.
  const json body = {{"callbackId", delivered.callback_id},
                     {"notifyStatus", delivered.answered ? json(delivered.status) : json()},
                     {"notifyBody", delivered.body}};
  return http::json_response(delivered.answered ? 200 : 502, body);
}

MockGateway::MockGateway(MockGatewaySettings settings)
    : settings_(std::move(settings)),
      signer_(channels::HmacConfig{settings_.secrets, settings_.window_ms}) {
  settings_.book = std::make_shared<MockGatewayBook>();
}

actors::ExtraActor MockGateway::actor() {
  return {std::string(kActorName), [self = shared_from_this()](caf::actor_system& system) {
            auto actor = caf::actor_cast<caf::strong_actor_ptr>(
                system.spawn<caf::detached>(mock_gateway_actor, self->settings_));
            self->actor_ = caf::actor_cast<caf::weak_actor_ptr>(actor);
            return actor;
          }};
}

MockGatewayActor MockGateway::handle() const {
  return caf::actor_cast<MockGatewayActor>(actor_.lock());
}

http::ExtraRoutes MockGateway::routes(actors::Engine& engine) {
  engine_ = &engine;
  http::ExtraRoutes routes;
  routes.open = [self = shared_from_this(), &engine](const http::HttpRequest& request,
                                                     std::string_view path,
                                                     http::Respond& respond) {
    if (path.starts_with(channels::kHmacBillPath)) {
      self->bill(engine, request, path.substr(channels::kHmacBillPath.size()), respond);
      return true;
    }
    return self->open_route(request, path, respond);
  };
  routes.api.push_back(
      {"POST", std::string(kMockPayPath),
       [self = shared_from_this(), &engine](http::OrdersApi& api, const http::ApiCall& call,
                                            http::Respond& respond) {
         return self->pay(engine, api, call, respond);
       }});
  routes.payment_created = [self = shared_from_this(),
                            &engine](const persistence::PaymentRow& payment) {
    // Only payments on the dialect it speaks; the API calls this after the commit, so the
    // callback never reaches the engine before the payment is visible.
    if (self->settings_.auto_pay && payment.channel == domain::to_string(self->settings_.channel)) {
      (void)engine.tell(self->handle(),
                        MockDelivery{payment.payment_no, 1, self->settings_.delay_ms,
                                     payment.amount_cents, MockOrigin::committed});
    }
  };
  return routes;
}

void MockGateway::listening(actors::Engine& engine, const std::string& host, std::uint16_t port) {
  const auto reachable = std::string(host == "0.0.0.0" ? "127.0.0.1" : host);
  serve_at(reachable, port);
  (void)engine.tell(handle(), target_atom::value, reachable, port);
}

void MockGateway::serve_at(const std::string& host, std::uint16_t port) {
  const std::lock_guard lock(base_mutex_);
  base_url_ = "http://" + host + ":" + std::to_string(port);
}

const std::vector<MockGateway::OpenRoute>& MockGateway::open_route_table() {
  static const std::vector<OpenRoute> table = {
      {"POST", "/api/gateway/payments", &MockGateway::create},
      {"GET", "/api/gateway/payments/{paymentNo}", &MockGateway::query},
      {"POST", "/api/gateway/payments/{paymentNo}/close", &MockGateway::close},
      {"POST", "/api/gateway/refunds", &MockGateway::refund},
      {"GET", "/api/mock-gateway/checkout/{paymentNo}", &MockGateway::checkout_page},
      {"POST", "/api/mock-gateway/checkout/{paymentNo}/pay", &MockGateway::checkout_pay},
      {"GET", "/api/mock-gateway/checkout.js", &MockGateway::checkout_script},
      {"GET", "/api/mock-gateway/checkout.css", &MockGateway::checkout_style},
  };
  return table;
}

bool MockGateway::open_route(const http::HttpRequest& request, std::string_view path,
                             http::Respond& respond) const {
  std::vector<std::string> args;
  bool matched = false;
  for (const auto& route : open_route_table()) {
    if (!http::match_pattern(route.pattern, path, args)) {
      continue;
    }
    if (route.method == request.method) {
      (this->*route.handler)(request, args, respond);
      return true;
    }
    matched = true;
  }
  if (matched) {
    respond(plain(405, "method not allowed"));
    return true;
  }
  if (under_own_prefix(path)) {
    respond(plain(404, "not found"));
    return true;
  }
  return false;
}

void MockGateway::query(const http::HttpRequest& /*request*/, const std::vector<std::string>& args,
                        http::Respond& respond) const {
  const std::string& payment = args.front();
  if (payment.size() > channels::kHmacMaxIdBytes) {
    respond(plain(404, "not found"));
    return;
  }
  const auto status = settings_.book->status_of(payment);
  if (!status) {
    // Not paid here (SPEC §10's format has no closed state: pending changes nothing); the body
    // says why, for a person reading it.
    const auto created = settings_.book->created(payment);
    const auto verdict =
        created ? take_verdict(&*created, false, MockOrigin::demand, domain::unix_time_ms())
                : MockVerdict::send;
    respond(plain(202, verdict == MockVerdict::send ? "pending" : std::string(to_string(verdict))));
    return;
  }
  const auto state = *status == 1 ? channels::QueryState::paid : channels::QueryState::failed;
  auto response = plain(200, signer_.signed_body(channels::query_callback_id(payment, state),
                                                 payment, *status, domain::unix_time_ms()));
  response.content_type = "application/json";
  respond(std::move(response));
}

void MockGateway::refund(const http::HttpRequest& request, const std::vector<std::string>& /*args*/,
                         http::Respond& respond) const {
  if (settings_.secrets.empty()) {
    respond(plain(404, "not found"));
    return;
  }
  auto read = channels::hmac_refund_read_request(request.body, settings_.secrets,
                                                 domain::unix_time_ms(), settings_.window_ms);
  if (!read.ok()) {
    respond(plain(401, read.detail()));
    return;
  }
  const auto& refund = read.value();
  // Idempotent by nature: the same refund number gets the same answer while the book holds (its
  // bill lists the first refund of a payment).
  const bool paid =
      settings_.book->refund(refund.payment_no, refund.amount_cents, domain::unix_time_ms());
  auto response =
      plain(200, channels::hmac_refund_answer_body(
                     settings_.secrets.front(), refund, paid,
                     paid ? "refunded by the mock gateway" : "not paid at the mock gateway",
                     domain::unix_time_ms()));
  response.content_type = "application/json";
  respond(std::move(response));
}

http::Result<void> MockGateway::pay(actors::Engine& engine, http::OrdersApi& api,
                                    const http::ApiCall& call, http::Respond& respond) const {
  const auto parsed = http::parse_body(call.request);
  if (!parsed.ok()) {
    return std::move(parsed).failure();
  }
  const auto& body = parsed.value();
  auto payment_field = http::id_field(body, "paymentNo", true);
  if (!payment_field.ok()) {
    return std::move(payment_field).failure();
  }
  const auto payment_no = std::move(payment_field).value();
  if (!body.contains("success") || !body["success"].is_boolean()) {
    return http::bad_request("success must be true or false", "success");
  }
  const int status = body["success"].get<bool>() ? 1 : 2;
  if (body.contains("notify") && !body["notify"].is_boolean()) {
    return http::bad_request("notify must be true or false", "notify");
  }
  const bool notify = body.value("notify", true);
  // A lost callback's settlement may be dated (Unix ms; default now): its bill lists it on that
  // day, so a day that has ended can be reconciled (SPEC §13 refuses one still going on).
  if (body.contains("atMs") &&
      (notify || !body["atMs"].is_number_integer() || body["atMs"].get<std::int64_t>() <= 0)) {
    return http::bad_request("atMs must be a positive Unix time in ms, with notify false", "atMs");
  }
  const auto at_ms = body.value("atMs", std::int64_t{0});
  // The amount goes into its book (its bill lists it) and into the stripe and standard dialects'
  // callbacks: the mock reads it from the payment first.
  api.dispatch(std::move(respond), [self = shared_from_this(), &engine, &api, payment_no, status,
                                    notify, at_ms](auto& store, const http::Respond& reply) {
    // An unknown payment is still delivered (amount 0): the notify path answers its 404.
    const auto payment = store.get_payment(payment_no);
    const auto amount = payment.ok() ? payment.value().row.amount_cents : std::int64_t{0};
    if (!notify) {
      // SPEC §10: settled at the mock gateway, the callback lost; only a query or the bill finds
      // it. Closed or expired here, it takes no payment.
      const auto now = domain::unix_time_ms();
      const auto taken = self->settings_.book->take(
          {payment_no, status, amount, MockOrigin::demand, now, at_ms > 0 ? at_ms : now});
      reply(taken.verdict != MockVerdict::send
                ? http::json_error(409, to_string(taken.verdict))
                : http::json_response(200, {{"paymentNo", payment_no},
                                            {"settled", status == 1 ? "paid" : "failed"},
                                            {"notify", false}}));
      return;
    }
    self->send(engine, api, {payment_no, status, 0, amount, MockOrigin::demand}, reply);
  });
  return {};
}

void MockGateway::send(actors::Engine& engine, http::OrdersApi& api, MockDelivery delivery,
                       const http::Respond& respond) const {
  // On-demand deliveries share the API's in-flight bound: each holds the mock gateway for a POST.
  api.run_in_slot(respond, [this, &engine, &delivery](const http::Respond& answer) {
    // No deadline of its own: the delivery's POST has the mock's timeout_ms.
    engine.ask(
        handle(), caf::infinite,
        [answer](const MockDelivered& delivered) { answer(delivered_response(delivered)); },
        [answer](const caf::error& /*why*/) {
          answer(http::json_error(503, "unavailable: the mock gateway gave no answer"));
        },
        pay_atom::value, std::move(delivery));
  });
}

}  // namespace seatflow::dev

// The dev profile's mock gateway, wired into a serving engine through the core's extension points:
// its actor (actors::ExtraActor, spawned and supervised by the engine), its routes
// (http::ExtraRoutes: the API's pay endpoint, the hmac gateway's payment, query and refund APIs
// it plays, and the checkout page a customer pays on), and the automatic success callback after
// each payment committed on its channel or created at it. Linked only into the server binary,
// which wires it in the dev profile with SEATFLOW_MOCK_GATEWAY on.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/engine.hpp"
#include "channels/hmac/hmac_channel.hpp"
#include "dev/mock_gateway_actor.hpp"
#include "http/api_routes.hpp"
#include "http/extra_routes.hpp"
#include "http/types.hpp"

namespace seatflow::dev {

// The API route that makes the mock gateway pay (or fail) a payment on demand.
inline constexpr std::string_view kMockPayPath = "/api/mock-gateway/pay";
// The checkout page of a payment created at the mock (its payUrl is the mock's base URL, this
// path and the payment number), its Pay and Fail buttons' route (<page>/pay, outside the API: a
// customer holds no API token; the pay URL is the capability, as at a real gateway's cashier),
// and the page's script and style sheet (no inline script or style: see kCheckoutCsp).
inline constexpr std::string_view kCheckoutPath = "/api/mock-gateway/checkout/";
inline constexpr std::string_view kCheckoutScriptPath = "/api/mock-gateway/checkout.js";
inline constexpr std::string_view kCheckoutStylePath = "/api/mock-gateway/checkout.css";
// Checkout payments in flight at once (each holds the mock's actor for a POST); more are 503.
inline constexpr std::size_t kCheckoutInflightMax = 16;

class MockGateway : public std::enable_shared_from_this<MockGateway> {
 public:
  // The actor's name under the supervisor.
  static constexpr std::string_view kActorName = "mock_gateway";

  // Make it with std::make_shared: its routes and its actor's spawn share it.
  explicit MockGateway(MockGatewaySettings settings);

  // The actor for EngineSettings::extra_actors; the engine spawns it, and it keeps the handle.
  [[nodiscard]] actors::ExtraActor actor();
  // The routes for the HTTP front; they send to the actor through `engine`, which must outlive
  // them.
  [[nodiscard]] http::ExtraRoutes routes(actors::Engine& engine);
  // Tells the actor where the engine's notify endpoint listens: the mock reaches the engine the
  // way a gateway would, over HTTP, on loopback when the engine listens on every interface. The
  // same address is the base of its pay URLs (serve_at).
  void listening(actors::Engine& engine, const std::string& host, std::uint16_t port);
  // The base URL of its pay URLs: http://host:port (listening() sets it; a test without an engine
  // sets it itself). Until it is set, a creation answers 503.
  void serve_at(const std::string& host, std::uint16_t port);

  // The routes outside the API (http::ExtraRoutes::open; routes() adds the bill's, GET
  // /api/gateway/bills/<date>), each below with its handler; another method on one of their paths
  // is 405, another path under theirs 404. Without an engine (a test), nothing is sent and a
  // creation schedules no callback.
  [[nodiscard]] bool open_route(const http::HttpRequest& request, std::string_view path,
                                http::Respond& respond) const;
  // What it has settled, created and closed, by payment.
  [[nodiscard]] MockGatewayBook& book() const { return *settings_.book; }

 private:
  using OpenHandler = void (MockGateway::*)(const http::HttpRequest& request,
                                            const std::vector<std::string>& args,
                                            http::Respond& respond) const;
  struct OpenRoute {
    std::string_view method;
    std::string_view pattern;  // as in http::match_pattern: {name} is one segment
    OpenHandler handler;
  };
  [[nodiscard]] static const std::vector<OpenRoute>& open_route_table();

  // GET /api/gateway/payments/{paymentNo} (SPEC §10): 200 with a signed §5 body when it settled
  // the payment, else 202 (its body says pending, closed or expired).
  void query(const http::HttpRequest& request, const std::vector<std::string>& args,
             http::Respond& respond) const;
  // POST /api/gateway/refunds: a signed refund request answered signed: succeeded when it settled
  // the payment as paid, refused otherwise; 401 when the request does not verify.
  void refund(const http::HttpRequest& request, const std::vector<std::string>& args,
              http::Respond& respond) const;
  // POST /api/gateway/payments (SPEC §16, dev/mock_gateway_payments.cpp; the wire format is
  // channels/hmac/hmac_payment.hpp's): a signed creation answered signed with its pay URL; the
  // same payment again answers the same pay URL. 400 malformed, 401 not signed or stale; signed
  // refusals: 409 amount_mismatch, closed or expired (its deadline has passed: nothing created),
  // 503 too_many_payments (the table is full) or not_ready (no pay URL yet).
  void create(const http::HttpRequest& request, const std::vector<std::string>& args,
              http::Respond& respond) const;
  // POST /api/gateway/payments/{paymentNo}/close (SPEC §16; the number form-encoded): a signed
  // close answered signed with closed, paid or not_found; from then on the payment takes no
  // payment here (not_found included: it is remembered closed).
  void close(const http::HttpRequest& request, const std::vector<std::string>& args,
             http::Respond& respond) const;
  // GET /api/mock-gateway/checkout/{paymentNo} (dev/mock_gateway_checkout.cpp): the payment's
  // checkout page (404 for a payment not created here), and its script and style sheet.
  void checkout_page(const http::HttpRequest& request, const std::vector<std::string>& args,
                     http::Respond& respond) const;
  void checkout_script(const http::HttpRequest& request, const std::vector<std::string>& args,
                       http::Respond& respond) const;
  void checkout_style(const http::HttpRequest& request, const std::vector<std::string>& args,
                      http::Respond& respond) const;
  // POST /api/mock-gateway/checkout/{paymentNo}/pay {success}: the page's buttons; a payment
  // created here only, answered as the API's pay endpoint answers (409 closed or expired).
  void checkout_pay(const http::HttpRequest& request, const std::vector<std::string>& args,
                    http::Respond& respond) const;

  // GET /api/gateway/bills/<date> (SPEC §13, dev/mock_gateway_bill.cpp): its book's payments and
  // refunds of the day in SEATFLOW_BILL_TIMEZONE (the day's bounds computed in PostgreSQL on an
  // API actor), signed; 404 for a day without any, 400 for a date that is none.
  void bill(actors::Engine& engine, const http::HttpRequest& request, std::string_view date,
            http::Respond& respond) const;
  // POST /api/mock-gateway/pay {paymentNo, success[, notify]}: a signed callback now (answered
  // with the notify endpoint's status and body), or with "notify": false a settlement without one
  // (a lost callback; only a query finds it); 409 {"error": "closed" | "expired"} when the
  // payment takes no payment here.
  http::Result<void> pay(actors::Engine& engine, http::OrdersApi& api, const http::ApiCall& call,
                         http::Respond& respond) const;
  // Asks the actor for `delivery` in one of the API's in-flight slots; `respond` answers with the
  // notify endpoint's reply.
  void send(actors::Engine& engine, http::OrdersApi& api, MockDelivery delivery,
            const http::Respond& respond) const;
  // The automatic success callback after a creation here, when the mock sends them on hmac.
  void schedule_created(const std::string& payment_no) const;
  // The pay URL of a payment created here; empty while the base URL is not known.
  [[nodiscard]] std::string pay_url(std::string_view payment_no) const;
  // The actor's typed handle: null before the engine spawned it and once the engine let it go.
  [[nodiscard]] MockGatewayActor handle() const;

  MockGatewaySettings settings_;
  channels::HmacChannel signer_;  // signs its query API's answers
  // Set once, when the engine spawns the actor (before any route or `listening` runs). Weak: the
  // engine's reference keeps the actor, and the actor system's end waits for no reference here.
  caf::weak_actor_ptr actor_;
  // Set once, by routes(), before any route runs; null in a test without an engine.
  actors::Engine* engine_ = nullptr;
  mutable std::mutex base_mutex_;
  std::string base_url_;  // "http://host:port", guarded by base_mutex_
  mutable std::atomic<std::size_t> checkout_inflight_{0};
};

// The checkout page's path of a payment: kCheckoutPath and the payment number as one path segment
// (percent-encoded but for RFC 3986's unreserved bytes).
[[nodiscard]] std::string checkout_path(std::string_view payment_no);
// What the API's pay endpoint and the checkout page answer for a delivery.
[[nodiscard]] http::HttpResponse delivered_response(const MockDelivered& delivered);

}  // namespace seatflow::dev

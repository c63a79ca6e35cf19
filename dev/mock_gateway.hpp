// The dev profile's mock gateway, wired into a serving engine through the core's extension points:
// its actor (actors::ExtraActor, spawned and supervised by the engine), its routes
// (http::ExtraRoutes: the API's pay endpoint and the hmac gateway's query and refund APIs it
// plays), and the automatic success callback after each payment created on its channel. Linked
// only into the server binary, which wires it in the dev profile with SEATFLOW_MOCK_GATEWAY on.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "actors/engine.hpp"
#include "channels/hmac/hmac_channel.hpp"
#include "dev/mock_gateway_actor.hpp"
#include "http/api_routes.hpp"
#include "http/extra_routes.hpp"
#include "http/types.hpp"

namespace seatflow::dev {

// The API route that makes the mock gateway pay (or fail) a payment on demand.
inline constexpr std::string_view kMockPayPath = "/api/mock-gateway/pay";

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
  // way a gateway would, over HTTP, on loopback when the engine listens on every interface.
  void listening(actors::Engine& engine, const std::string& host, std::uint16_t port) const;

  // The routes outside the API (http::ExtraRoutes::open; routes() adds the bill's, GET
  // /api/gateway/bills/<date>): GET /api/gateway/payments/<paymentNo>
  // (SPEC §10: 200 with a signed §5 body when it settled the payment, 202 while it did not) and
  // POST /api/gateway/refunds (a signed refund request answered signed: succeeded when it settled
  // the payment as paid, refused otherwise; 401 when the request does not verify). Another method
  // on either path is 405.
  [[nodiscard]] bool open_route(const http::HttpRequest& request, std::string_view path,
                                http::Respond& respond) const;
  // What it has settled, by payment.
  [[nodiscard]] MockGatewayBook& book() const { return *settings_.book; }

 private:
  [[nodiscard]] http::HttpResponse query(std::string_view payment_no) const;
  [[nodiscard]] http::HttpResponse refund(const http::HttpRequest& request) const;
  // GET /api/gateway/bills/<date> (SPEC §13, dev/mock_gateway_bill.cpp): its book's payments and
  // refunds of the day in SEATFLOW_BILL_TIMEZONE (the day's bounds computed in PostgreSQL on an
  // API actor), signed; 404 for a day without any, 400 for a date that is none.
  void bill(actors::Engine& engine, const http::HttpRequest& request, std::string_view date,
            http::Respond& respond) const;
  // POST /api/mock-gateway/pay {paymentNo, success[, notify]}: a signed callback now (answered
  // with the notify endpoint's status and body), or with "notify": false a settlement without one
  // (a lost callback; only a query finds it).
  http::Result<void> pay(actors::Engine& engine, http::OrdersApi& api, const http::ApiCall& call,
                         http::Respond& respond) const;
  // Asks the actor for `delivery` in one of the API's in-flight slots; `respond` answers with the
  // notify endpoint's reply.
  void send(actors::Engine& engine, http::OrdersApi& api, MockDelivery delivery,
            const http::Respond& respond) const;
  // The actor's typed handle: null before the engine spawned it and once the engine let it go.
  [[nodiscard]] MockGatewayActor handle() const;

  MockGatewaySettings settings_;
  channels::HmacChannel signer_;  // signs its query API's answers
  // Set once, when the engine spawns the actor (before any route or `listening` runs). Weak: the
  // engine's reference keeps the actor, and the actor system's end waits for no reference here.
  caf::weak_actor_ptr actor_;
};

}  // namespace seatflow::dev

// Mock gateway actor (dev profile only): sends signed callbacks (hmac, stripe or standard dialect)
// over real HTTP to the engine's own notify endpoint, or (hmac) to the notify URL a payment was
// created with at the mock, through the same verification path as a real gateway. Detached: it
// blocks. Its messages and its typed interface are declared here, beside it: it is no core actor,
// and actors/ never includes dev/ (the engine holds it without an interface, to supervise and stop
// it; MockGateway holds the typed handle).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "channels/hmac/hmac_channel.hpp"
#include "channels/standard/standard_channel.hpp"
#include "channels/stripe/stripe_channel.hpp"
#include "dev/mock_gateway_book.hpp"
#include "domain/types.hpp"
#include "net/http_client.hpp"

namespace seatflow::dev {

// A signed callback the mock gateway must send (after `delay_ms`): to the notify URL of its
// creation when the payment was created at the mock (SPEC §16), else to the engine's notify path
// of the dialect it speaks. Its book decides first whether the payment takes it (MockVerdict).
struct MockDelivery {
  std::string payment_no;
  int status = 1;  // 1 success, 2 failure
  std::uint32_t delay_ms = 0;
  // The payment's amount: the stripe and standard dialects carry it (the hmac one does not).
  std::int64_t amount_cents = 0;
  MockOrigin origin = MockOrigin::demand;
};

// What a delivery came to: its callback id, the notify endpoint's HTTP status (0 = no answer) and
// body (or, without an answer, why not).
struct MockDelivered {
  std::string callback_id;
  bool answered = false;  // the engine's notify endpoint answered (else `body` says why not)
  int status = 0;         // its HTTP status, when it answered
  std::string body;
  MockVerdict verdict = MockVerdict::send;  // anything else: nothing was sent
};

// The automatic callback after a payment is committed by the engine or created at the mock:
// MockDelivery alone, sent after its delay unless the book says otherwise; nobody waits for it.
// POST /api/mock-gateway/pay → mock gateway: (pay_atom, MockDelivery): send it now, answer what it
// came to.
using pay_atom = caf::atom_constant<caf::atom("pay")>;
// wiring → mock gateway: the engine's own address, once the server has bound it; (host, port).
using target_atom = caf::atom_constant<caf::atom("target")>;
// mock gateway → itself: a delayed delivery is due.
using deliver_atom = caf::atom_constant<caf::atom("deliver")>;

// The mock gateway's interface: the automatic MockDelivery, (pay_atom, MockDelivery) →
// MockDelivered, (target_atom, host, port), and (deliver_atom, MockDelivery) from itself.
using MockGatewayActor =
    caf::typed_actor<caf::reacts_to<MockDelivery>,
                     caf::replies_to<pay_atom, MockDelivery>::with<MockDelivered>,
                     caf::reacts_to<target_atom, std::string, std::uint16_t>,
                     caf::reacts_to<deliver_atom, MockDelivery>>;

// The settings app/ parses (SEATFLOW_MOCK_GATEWAY_*, with their defaults in app/config.hpp) come
// in through the wiring; the rest are the mock's own.
struct MockGatewaySettings {
  // SEATFLOW_BILL_TIMEZONE: the day its bill covers (the engine reads the bill in that zone).
  std::string bill_timezone = "Asia/Shanghai";
  // SEATFLOW_MOCK_GATEWAY_AUTO: a success callback after each payment created on `channel` (and,
  // when it is hmac, after each payment created at the mock).
  bool auto_pay = false;
  // SEATFLOW_MOCK_GATEWAY_DEADLINE: it takes no payment after a creation's expiresAt (off: it plays
  // a gateway that keeps no deadline, as Stripe keeps none; the deadline race's control run).
  bool keeps_deadline = true;
  std::uint32_t delay_ms = 0;         // SEATFLOW_MOCK_GATEWAY_DELAY_MS: the automatic callback's
  std::size_t pending_max = 10'000;   // scheduled deliveries at once; more are dropped
  std::uint32_t timeout_ms = 15'000;  // per HTTP delivery
  std::vector<std::string> secrets;   // hmac: the first signs (SEATFLOW_CALLBACK_SECRETS)
  std::int64_t window_ms = 0;         // SEATFLOW_CALLBACK_WINDOW_MS: its refund API's check
  domain::Channel channel = domain::Channel::hmac;   // the dialect it speaks
  std::optional<channels::StripeConfig> stripe;      // required when channel is stripe
  std::optional<channels::StandardConfig> standard;  // required when channel is standard
  std::string currency = std::string(channels::kDefaultCurrency);
  std::shared_ptr<MockGatewayBook> book;  // set by MockGateway
};

struct MockGatewayState {
  static inline const char* name = "seatflow.mock_gateway";
  std::unique_ptr<channels::HmacChannel> signer;
  // The signing side of the webhook dialect in use (null unless it is stripe / standard).
  std::unique_ptr<channels::StripeChannel> stripe;
  std::unique_ptr<channels::StandardChannel> standard;
  std::unique_ptr<net::HttpClient> client;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::size_t pending = 0;
  MockGatewaySettings settings;
};

// MockGatewayActor.
[[nodiscard]] MockGatewayActor::behavior_type mock_gateway_actor(
    MockGatewayActor::stateful_pointer<MockGatewayState> self, MockGatewaySettings settings);

}  // namespace seatflow::dev

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::dev::MockDelivery)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(seatflow::dev::MockDelivered)

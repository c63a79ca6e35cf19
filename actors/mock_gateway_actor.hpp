// Mock gateway (dev profile only): sends signed callbacks (hmac, stripe or standard dialect) over
// real HTTP to the engine's own notify endpoint, through the same verification path as a real
// gateway. Detached: it blocks.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "channels/hmac/hmac_channel.hpp"
#include "channels/standard/standard_channel.hpp"
#include "channels/stripe/stripe_channel.hpp"
#include "net/http_client.hpp"

namespace seatflow::actors {

// What the mock gateway has settled, by payment: 1 paid, 2 failed (SPEC §10: it answers the hmac
// query endpoint from what it knows). Every delivery is recorded before it is sent, and
// `POST /api/mock-gateway/pay {"notify": false}` settles without sending (a lost callback).
// Shared by the mock actor and the HTTP layer; thread-safe; the oldest entries go past the bound.
class MockGatewayBook {
 public:
  static constexpr std::size_t kEntriesMax = 100'000;
  void settle(const std::string& payment_no, int status);
  [[nodiscard]] std::optional<int> status_of(const std::string& payment_no) const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, int> status_;
  std::deque<std::string> order_;  // insertion order, for the bound
};

struct MockGatewaySettings {
  bool enabled = false;  // SEATFLOW_MOCK_GATEWAY (dev profile only; the profile sets the default)
  // SEATFLOW_MOCK_GATEWAY_AUTO: the API schedules a success callback after each payment it creates.
  bool auto_pay = true;
  std::uint32_t delay_ms = 2'000;     // automatic success after a payment is created
  std::size_t pending_max = 10'000;   // scheduled deliveries at once; more are dropped
  std::uint32_t timeout_ms = 15'000;  // per HTTP delivery
  std::vector<std::string> secrets;   // hmac: the first signs
  domain::Channel channel = domain::Channel::hmac;   // the dialect it speaks
  std::optional<channels::StripeConfig> stripe;      // required when channel is stripe
  std::optional<channels::StandardConfig> standard;  // required when channel is standard
  std::string currency = std::string(channels::kDefaultCurrency);
  std::shared_ptr<MockGatewayBook> book;  // set by the engine
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

// Handles MockDelivery, (deliver_atom, MockDelivery) and (target_atom, host, port).
[[nodiscard]] caf::behavior mock_gateway_actor(caf::stateful_actor<MockGatewayState>* self,
                                               MockGatewaySettings settings);

}  // namespace seatflow::actors

// Mock gateway (dev profile only): sends signed callbacks (hmac, stripe or standard dialect) over
// real HTTP to the engine's own notify endpoint, through the same verification path as a real
// gateway. Detached: it blocks.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "channels/hmac_channel.hpp"
#include "channels/standard_channel.hpp"
#include "channels/stripe_channel.hpp"

namespace seatflow::actors {

struct MockGatewaySettings {
  bool enabled = false;
  std::uint32_t delay_ms = 2'000;     // automatic success after a payment is created
  std::size_t max_pending = 10'000;   // scheduled deliveries at once; more are dropped
  std::uint32_t timeout_ms = 15'000;  // per HTTP delivery
  std::vector<std::string> secrets;   // hmac: the first signs
  domain::Channel channel = domain::Channel::hmac;   // the dialect it speaks
  std::optional<channels::StripeConfig> stripe;      // required when channel is stripe
  std::optional<channels::StandardConfig> standard;  // required when channel is standard
  std::string currency = std::string(channels::kDefaultCurrency);
};

struct MockGatewayState {
  static inline const char* name = "seatflow.mock_gateway";
  std::unique_ptr<channels::HmacChannel> signer;
  // The signing side of the webhook dialect in use (null unless it is stripe / standard).
  std::unique_ptr<channels::StripeChannel> stripe;
  std::unique_ptr<channels::StandardChannel> standard;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::size_t pending = 0;
  MockGatewaySettings settings;
};

// Handles MockDelivery, (deliver_atom, MockDelivery) and (target_atom, host, port).
[[nodiscard]] caf::behavior mock_gateway_actor(caf::stateful_actor<MockGatewayState>* self,
                                               MockGatewaySettings settings);

}  // namespace seatflow::actors

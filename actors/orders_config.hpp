// The settings of the order lifecycle's actors: the timeout sweeper, the reconciler and the dev
// mock gateway (README "Settings"). app/ parses SEATFLOW_* into it; the defaults are these.
#pragma once

#include <cstddef>
#include <cstdint>

#include "domain/types.hpp"

namespace seatflow::actors {

struct OrdersConfig {
  std::int64_t order_timeout_ms = 15 * 60 * 1000;  // expires_at = now + this
  bool sweeper_enabled = true;
  std::uint32_t sweep_interval_ms = 5'000;
  std::size_t sweep_batch = 200;
  bool mock_gateway = false;      // dev profile only; prod forces it off
  bool mock_gateway_auto = true;  // automatic success after a payment is created
  std::uint32_t mock_gateway_delay_ms = 2'000;
  // The dialect the mock gateway speaks (SEATFLOW_MOCK_GATEWAY_CHANNEL): hmac, stripe or standard;
  // its automatic callback follows payments created on this channel.
  domain::Channel mock_gateway_channel = domain::Channel::hmac;
  std::uint32_t reconcile_interval_ms = 60'000;  // between reconciler passes; 0 = off
  std::size_t reconcile_batch = 500;             // orders per reconciler batch
};

}  // namespace seatflow::actors

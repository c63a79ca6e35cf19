// The gateway actors (SPEC §16): a small detached pool that creates payments at their gateway and
// closes them there for the API, one PostgreSQL connection each, so a slow gateway holds neither
// the scheduler nor the API actors' store connections.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/payment_gateway_caller.hpp"
#include "actors/persistence_actor.hpp"
#include "persistence/stores/gateway_store.hpp"

namespace seatflow::actors {

struct GatewaySettings {
  // SEATFLOW_GATEWAY_CALLERS: gateway actors (concurrent creates and closes for the API).
  std::size_t callers = 2;
  // SEATFLOW_NOTIFY_BASE_URL: the engine as gateways reach it; notify URLs are
  // {base}/api/payment/notify/<channel>.
  std::string notify_base_url;
  // SEATFLOW_GATEWAY_CREATE: create payments at their gateway (off: the merchant's own integration
  // creates them there; SeatFlow still closes them there before it cancels).
  bool create_enabled = true;
  // SEATFLOW_GATEWAY_CLOSE: close at the gateway before cancelling (off only in the dev profile:
  // the chaos scenario's control run).
  bool close_enabled = true;
  // SEATFLOW_CLOSE_GRACE_MS: the sweeper cancels an order whose close its gateway did not confirm
  // this long after the order expired (event=close_unconfirmed).
  std::uint32_t close_grace_ms = 600'000;
};

struct GatewayActorState {
  static inline const char* name = "seatflow.gateway";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::GatewayStore> store;
};

// What a create asks the gateway for: the payment, its order's deadline, SeatFlow's notify URL.
[[nodiscard]] channels::CreateTarget create_target(const persistence::GatewaySubject& subject,
                                                   const std::string& notify_base_url);

[[nodiscard]] GatewayActor::behavior_type gateway_actor(
    GatewayActor::stateful_pointer<GatewayActorState> self, StoreSettings store,
    GatewaySettings settings, std::shared_ptr<PaymentGatewayCaller> caller);

}  // namespace seatflow::actors

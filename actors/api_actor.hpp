// API actor: runs order/payment API jobs with blocking libpqxx/hiredis calls; spawned detached,
// in a small pool, one PostgreSQL and one Redis connection each.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <optional>

#include <caf/all.hpp>

#include "actors/channel_tokens.hpp"
#include "actors/messages.hpp"
#include "actors/payment_gateway_caller.hpp"
#include "actors/payment_querier.hpp"
#include "actors/persistence_actor.hpp"
#include "persistence/stores/gateway_store.hpp"
#include "persistence/stores/order_store.hpp"
#include "persistence/stores/query_store.hpp"

namespace seatflow::actors {

struct ApiState {
  static inline const char* name = "seatflow.api";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RedisClient> redis;
  std::unique_ptr<persistence::SeatStore> seats;
  std::unique_ptr<persistence::OrderStore> store;
  std::unique_ptr<persistence::QueryStore> queries;    // sweeper, when it asks gateways first
  std::unique_ptr<persistence::GatewayStore> gateway;  // sweeper, when it closes at gateways
  std::size_t swept = 0;    // sweeper: orders cancelled in the current sweep
  std::size_t batches = 0;  // sweeper: batches run in the current sweep
  // Sweeper: its gateway calls per channel at SweeperSettings::rate_per_s.
  std::optional<ChannelTokens> tokens;
};

// Opens the state's PostgreSQL and Redis connections and its OrderStore (API actors, sweeper).
void open_api_stores(ApiState& st, const StoreSettings& settings,
                     std::uint32_t query_first_step_ms);

// ApiActor: ApiJob. `query_first_step_ms`: new payments' first active query (0 = none).
[[nodiscard]] ApiActor::behavior_type api_actor(ApiActor::stateful_pointer<ApiState> self,
                                                StoreSettings settings,
                                                std::uint32_t query_first_step_ms);

struct SweeperSettings {
  bool enabled = true;
  std::uint32_t interval_ms = 5'000;
  std::size_t batch = 200;       // orders per batch
  std::size_t batches_max = 10;  // batches per sweep, so one sweep is bounded
  // SPEC §10: ask the gateway about a pending payment before cancelling its order (when a query
  // dialect is configured for its channel). An unreachable gateway postpones the cancel once, by
  // this long (the first step of the query schedule).
  std::uint32_t query_postpone_ms = 60'000;
  // SPEC §16: a payment whose close its gateway did not confirm is tried again on the next
  // passes; its order is cancelled anyway this long after it expired (event=close_unconfirmed).
  std::uint32_t close_grace_ms = 600'000;
  // Gateway calls (queries and closes) per second per channel (SEATFLOW_QUERY_RATE_PER_S): a
  // sweep over many expired orders waits for its tokens instead of flooding a gateway.
  std::uint32_t rate_per_s = 20;
};

// The gateways the sweeper asks before it cancels: `querier` (SPEC §10) and `closer` (SPEC §16,
// which queries first itself); either may be null.
struct SweeperGateways {
  std::shared_ptr<PaymentQuerier> querier;
  std::shared_ptr<PaymentGatewayCaller> closer;
};

// SweeperActor: sweep_atom; cancels expired pending orders (closing them at their gateway, or
// asking it, first), then schedules the next sweep.
[[nodiscard]] SweeperActor::behavior_type sweeper_actor(
    SweeperActor::stateful_pointer<ApiState> self, StoreSettings settings, SweeperSettings sweeper,
    SweeperGateways gateways);

}  // namespace seatflow::actors

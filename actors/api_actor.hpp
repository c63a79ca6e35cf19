// API actor: runs order/payment API jobs with blocking libpqxx/hiredis calls; spawned detached,
// in a small pool, one PostgreSQL and one Redis connection each.
#pragma once

#include <memory>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/payment_querier.hpp"
#include "actors/persistence_actor.hpp"
#include "persistence/stores/order_store.hpp"
#include "persistence/stores/query_store.hpp"

namespace seatflow::actors {

struct ApiState {
  static inline const char* name = "seatflow.api";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RedisClient> redis;
  std::unique_ptr<persistence::SeatStore> seats;
  std::unique_ptr<persistence::OrderStore> store;
  std::unique_ptr<persistence::QueryStore> queries;  // sweeper, when it asks gateways first
  std::size_t swept = 0;    // sweeper: orders cancelled in the current sweep
  std::size_t batches = 0;  // sweeper: batches run in the current sweep
};

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
};

// SweeperActor: sweep_atom; cancels expired pending orders (asking `querier`'s gateways first,
// when given), then schedules the next sweep.
[[nodiscard]] SweeperActor::behavior_type sweeper_actor(
    SweeperActor::stateful_pointer<ApiState> self, StoreSettings settings, SweeperSettings sweeper,
    std::shared_ptr<PaymentQuerier> querier);

}  // namespace seatflow::actors

// One PostgreSQL session and one Redis connection with the stores built on them, for a test (or one
// of its threads) that drives the persistence layer as an engine would.
#pragma once

#include "persistence/batch_store.hpp"
#include "persistence/callback_store.hpp"
#include "persistence/order_store.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {

struct StoreConnections {
  // Against the shared test servers, or against a Redis of the test's own.
  explicit StoreConnections(persistence::RedisEndpoint redis_endpoint = test_redis_endpoint())
      : pg(test_pg_dsn(), 5000, nullptr),
        redis(std::move(redis_endpoint), 2000, nullptr),
        seats(redis),
        orders(pg, seats),
        callbacks(pg, seats, nullptr) {}
  persistence::PgSession pg;
  persistence::RedisClient redis;
  persistence::SeatStore seats;
  persistence::OrderStore orders;
  persistence::CallbackStore callbacks;
};

}  // namespace seatflow::testing

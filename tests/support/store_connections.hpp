// One PostgreSQL session and one Redis connection with the stores built on them, for a test (or one
// of its threads) that drives the persistence layer as an engine would.
#pragma once

#include <optional>

#include "http/status.hpp"
#include "persistence/stores/batch_store.hpp"
#include "persistence/stores/callback_store.hpp"
#include "persistence/stores/order_store.hpp"
#include "persistence/stores/sql.hpp"
#include "support/rejections.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {

struct StoreConnections {
  // Against the shared test servers, or against a Redis of the test's own.
  explicit StoreConnections(persistence::RedisEndpoint redis_endpoint = test_redis_endpoint())
      : pg(test_pg_dsn(), 5000, nullptr, &persistence::prepare_statements),
        redis(std::move(redis_endpoint), 2000, nullptr),
        seats(redis),
        orders(pg, seats),
        callbacks(pg, seats, nullptr, &http::callback_status) {}
  persistence::PgSession pg;
  persistence::RedisClient redis;
  persistence::SeatStore seats;
  persistence::OrderStore orders;
  persistence::CallbackStore callbacks;
};

// The sweeper's two steps without its gateway query: cancels up to `batch` expired pending orders
// (and closes their payments), stopping at a store outage; returns how many it cancelled.
inline std::size_t sweep_expired(persistence::OrderStore& orders, std::size_t batch) {
  const auto candidates = orders.list_expired(batch);
  if (!candidates.ok()) {
    return 0;
  }
  std::size_t cancelled = 0;
  for (const auto& order : candidates.value()) {
    const auto error = orders.cancel_if_expired(order.order_no).error();
    if (!error) {
      ++cancelled;
    } else if (persistence::is_unavailable(error)) {
      break;
    }
  }
  return cancelled;
}

// A new order of `seats` in the test's show (`<prefix>-show`), numbered `<prefix>-<name>`.
[[nodiscard]] inline persistence::NewOrder test_order(const Stores& stores, const std::string& name,
                                                      std::vector<std::string> seats) {
  persistence::NewOrder out;
  out.order_no = stores.id(name);
  out.user_id = "user-1";
  out.show_id = stores.id("show");
  out.seat_ids = std::move(seats);
  out.amount_cents = 5000;
  return out;
}

// How a store call was done, for assertions; nullopt when it was refused (its error() says why).
template <class Row>
std::optional<persistence::Done> done(const persistence::Result<persistence::Stored<Row>>& result) {
  if (!result.ok()) {
    return std::nullopt;
  }
  return result.value().done;
}

// A pending order with a pending hmac payment (`<prefix>-<name>-pay`) made through the orders
// store, as the API makes them; returns the payment number.
inline std::string create_pending_through_api(const Stores& stores, StoreConnections& c,
                                              const std::string& name,
                                              std::vector<std::string> seats) {
  const auto o = test_order(stores, name, std::move(seats));
  EXPECT_EQ(testing::done(c.orders.create_order(o)), persistence::Done::created);
  const auto payment_no = stores.id(name + "-pay");
  EXPECT_EQ(testing::done(c.orders.create_payment({o.order_no, "hmac", payment_no})),
            persistence::Done::created);
  return payment_no;
}

}  // namespace seatflow::testing

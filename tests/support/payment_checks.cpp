// Shared checks of the gateway dialects' functional suites (see payment_checks.hpp).
#include "support/payment_checks.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace seatflow::testing {

Pending::Pending(Stores& stores, const std::string& channel, const std::string& name)
    : payment(stores.id("pay-" + channel + name)),
      order(stores.id("ord-" + channel + name)),
      show(stores.id("show-" + channel + name)) {
  stores.create_pending(payment, order, show, seats, 5000, channel);
}

void expect_paid(Stores& stores, const Pending& p, const std::string& trade_no) {
  EXPECT_EQ(stores.payment_status(p.payment), 1);
  EXPECT_TRUE(stores.payment_paid_at_set(p.payment));
  EXPECT_EQ(stores.channel_trade_no(p.payment), trade_no);
  EXPECT_EQ(stores.order_status(p.order), 1);
  for (const auto& seat : p.seats) {
    EXPECT_EQ(stores.seat(p.show, seat), "2:" + p.order) << "seat " << seat;
  }
}

void expect_untouched(Stores& stores, const Pending& p, const std::string& callback_id) {
  EXPECT_EQ(stores.payment_status(p.payment), 0);
  EXPECT_FALSE(stores.payment_paid_at_set(p.payment));
  EXPECT_EQ(stores.channel_trade_no(p.payment), std::nullopt);
  EXPECT_EQ(stores.order_status(p.order), 0);
  EXPECT_FALSE(stores.log_row(callback_id).has_value()) << "a rejection leaves no log row";
  EXPECT_EQ(stores.log_rows_for_payment(p.payment), 0);
  for (const auto& seat : p.seats) {
    EXPECT_EQ(stores.seat(p.show, seat), "1:" + p.order) << "seat " << seat;
  }
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace seatflow::testing

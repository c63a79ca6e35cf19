// Functional-test helpers shared by the gateway dialects' suites: a pending payment, what "paid"
// and "untouched" mean in both stores, and a bounded wait.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "support/stores.hpp"

namespace seatflow::testing {

// One pending order with two locked seats and its pending payment on `channel`.
struct Pending {
  Pending(Stores& stores, const std::string& channel, const std::string& name = "");
  std::string payment;
  std::string order;
  std::string show;
  std::vector<std::string> seats{"A1", "A2"};
};

// The payment SUCCESS with paid_at and `trade_no`, its order PAID, every seat sold to it.
void expect_paid(Stores& stores, const Pending& p, const std::string& trade_no);
// Nothing moved and nothing was logged: payment and order pending, no log row (for
// `callback_id`, nor any for the payment), the seats still locked by the order.
void expect_untouched(Stores& stores, const Pending& p, const std::string& callback_id);

// Polls `done` every 20 ms until it holds or `timeout` passes; the last answer.
[[nodiscard]] bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout);

}  // namespace seatflow::testing

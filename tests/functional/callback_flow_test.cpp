// Functional tests: verified hmac callbacks end to end over HTTP, checked in the stores (SPEC §6).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <thread>

#include "support/engine_fixture.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

// One pending order with two locked seats and its pending hmac payment, ids unique to the test.
struct Pending {
  explicit Pending(Stores& stores, const std::string& tag = "")
      : payment(stores.id("pay" + tag)),
        order(stores.id("ord" + tag)),
        show(stores.id("show" + tag)) {
    stores.create_pending(payment, order, show, seats);
  }
  std::string payment;
  std::string order;
  std::string show;
  std::vector<std::string> seats{"A1", "A2"};
};

void expect_seats(Stores& stores, const Pending& p, const std::string& value) {
  for (const auto& seat : p.seats) {
    EXPECT_EQ(stores.seat(p.show, seat), value) << "seat " << seat;
  }
}

TEST(Callback, FirstDeliveryAppliesAndTheSameBodyAgainIsADuplicate) {
  Stores stores;
  const Pending p(stores);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto callback_id = stores.id("cb1");
  const auto body = signed_body(callback_id, p.payment, 1);

  const auto first = engine.notify(body);
  EXPECT_EQ(first.status, 200) << first.body << first.error;
  EXPECT_EQ(first.body, "success");
  EXPECT_EQ(stores.payment_status(p.payment), 1);
  EXPECT_TRUE(stores.payment_paid_at_set(p.payment));
  EXPECT_EQ(stores.order_status(p.order), 1);
  expect_seats(stores, p, "2:" + p.order);
  const auto row = stores.log_row(callback_id);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->duplicate_count, 0);

  const auto second = engine.notify(body);
  EXPECT_EQ(second.status, 200) << second.body << second.error;
  EXPECT_EQ(second.body, "success");
  // The duplicate was answered from the payment actor's memory; its count arrives at the flush.
  EXPECT_EQ(stores.await_duplicate_count(callback_id, 1), 1);
  EXPECT_EQ(stores.log_rows_for_payment(p.payment), 1);
  EXPECT_EQ(stores.payment_status(p.payment), 1);
  expect_seats(stores, p, "2:" + p.order);

  EXPECT_EQ(engine.callbacks("applied"), 1.0);
  EXPECT_EQ(engine.callbacks("duplicate"), 1.0);
}

TEST(Callback, UpperCaseHexSignatureIsAccepted) {
  Stores stores;
  const Pending p(stores);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  auto body = signed_body(stores.id("cb1"), p.payment, 1);
  const auto sign = sign_of(body);
  ASSERT_EQ(sign.size(), 64U);
  auto upper = sign;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  ASSERT_NE(upper, sign) << "the signature has no hex letter to upper-case";
  body.replace(body.find(sign), sign.size(), upper);

  const auto response = engine.notify(body);
  EXPECT_EQ(response.status, 200) << response.body << response.error;
  EXPECT_EQ(stores.payment_status(p.payment), 1);
  EXPECT_EQ(stores.order_status(p.order), 1);
}

TEST(Callback, FailureThenSuccessWithAnotherCallbackIdPays) {
  Stores stores;
  const Pending p(stores);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());

  const auto failure = engine.notify(signed_body(stores.id("cb-fail"), p.payment, 2));
  EXPECT_EQ(failure.status, 200) << failure.body << failure.error;
  EXPECT_EQ(failure.body, "success");
  EXPECT_EQ(stores.payment_status(p.payment), 2);
  EXPECT_FALSE(stores.payment_paid_at_set(p.payment));
  EXPECT_EQ(stores.order_status(p.order), 0);
  expect_seats(stores, p, "1:" + p.order);

  const auto success = engine.notify(signed_body(stores.id("cb-ok"), p.payment, 1));
  EXPECT_EQ(success.status, 200) << success.body << success.error;
  EXPECT_EQ(stores.payment_status(p.payment), 1);
  EXPECT_TRUE(stores.payment_paid_at_set(p.payment));
  EXPECT_EQ(stores.order_status(p.order), 1);
  expect_seats(stores, p, "2:" + p.order);
  EXPECT_EQ(stores.log_rows_for_payment(p.payment), 2);
  EXPECT_EQ(engine.callbacks("applied"), 2.0);
}

TEST(Callback, SameCallbackIdWithDifferentStatusIsAConflict) {
  Stores stores;
  const Pending p(stores);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto callback_id = stores.id("cb1");

  ASSERT_EQ(engine.notify(signed_body(callback_id, p.payment, 2)).status, 200);
  ASSERT_EQ(stores.payment_status(p.payment), 2);

  // Validly signed, same id, different business content: a success here must not pay.
  const auto conflict = engine.notify(signed_body(callback_id, p.payment, 1));
  EXPECT_EQ(conflict.status, 409) << conflict.body << conflict.error;
  EXPECT_EQ(stores.payment_status(p.payment), 2);
  EXPECT_FALSE(stores.payment_paid_at_set(p.payment));
  EXPECT_EQ(stores.order_status(p.order), 0);
  expect_seats(stores, p, "1:" + p.order);
  const auto row = stores.log_row(callback_id);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->status, 2);
  EXPECT_EQ(engine.callbacks("conflict"), 1.0);
}

TEST(Callback, MarkSoldFailureIs503AndLeavesNothingThenTheRetryApplies) {
  Stores stores;
  const Pending p(stores);
  const auto other = stores.id("OTHER");
  stores.set_seat(p.show, "A2", "2:" + other);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto callback_id = stores.id("cb1");
  const auto body = signed_body(callback_id, p.payment, 1);

  const auto failed = engine.notify(body);
  EXPECT_EQ(failed.status, 503) << failed.body << failed.error;
  EXPECT_FALSE(failed.header("retry-after").empty()) << "503 must carry Retry-After";
  EXPECT_EQ(stores.payment_status(p.payment), 0);
  EXPECT_FALSE(stores.payment_paid_at_set(p.payment));
  EXPECT_EQ(stores.order_status(p.order), 0);
  EXPECT_FALSE(stores.log_row(callback_id).has_value()) << "the log row must roll back too";
  EXPECT_EQ(stores.seat(p.show, "A1"), "1:" + p.order) << "mark_sold must change nothing";
  EXPECT_EQ(stores.seat(p.show, "A2"), "2:" + other);
  EXPECT_EQ(engine.callbacks("mark_sold_failed"), 1.0);

  // Heal the seat; the gateway's retry of the very same body is then a first delivery.
  stores.set_seat(p.show, "A2", "1:" + p.order);
  const auto retried = engine.notify(body);
  EXPECT_EQ(retried.status, 200) << retried.body << retried.error;
  EXPECT_EQ(retried.body, "success");
  EXPECT_EQ(stores.payment_status(p.payment), 1);
  EXPECT_TRUE(stores.payment_paid_at_set(p.payment));
  EXPECT_EQ(stores.order_status(p.order), 1);
  expect_seats(stores, p, "2:" + p.order);
  const auto row = stores.log_row(callback_id);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->duplicate_count, 0);
  EXPECT_EQ(engine.callbacks("applied"), 1.0);
}

TEST(Callback, SuccessAfterCancelRecordsADiscrepancyAndMovesNothing) {
  Stores stores;
  const auto payment = stores.id("pay");
  const auto order = stores.id("ord");
  const auto show = stores.id("show");
  stores.create_order(order, show, {"B1"}, 5000, /*status=*/2);
  stores.create_payment(payment, order, "hmac", 5000, /*status=*/3);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());

  const auto response = engine.notify(signed_body(stores.id("cb1"), payment, 1));
  EXPECT_EQ(response.status, 200) << response.body << response.error;
  EXPECT_EQ(response.body, "success");
  EXPECT_EQ(stores.discrepancies(payment, "paid_after_cancel"), 1);
  EXPECT_EQ(stores.payment_status(payment), 3);
  EXPECT_FALSE(stores.payment_paid_at_set(payment));
  EXPECT_EQ(stores.order_status(order), 2);
  EXPECT_EQ(stores.seat(show, "B1"), "") << "a cancelled order's seat must not be sold";
  EXPECT_EQ(engine.callbacks("discrepancy"), 1.0);
}

TEST(Callback, SuccessAfterRefundRecordsADiscrepancyAndMovesNothing) {
  Stores stores;
  const auto payment = stores.id("pay");
  const auto order = stores.id("ord");
  stores.create_order(order, stores.id("show"), {"R1"}, 5000, /*status=*/3);
  stores.create_payment(payment, order, "hmac", 5000, /*status=*/4);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());

  const auto response = engine.notify(signed_body(stores.id("cb1"), payment, 1));
  EXPECT_EQ(response.status, 200) << response.body << response.error;
  EXPECT_EQ(stores.discrepancies(payment, "paid_after_refund"), 1);
  EXPECT_EQ(stores.payment_status(payment), 4);
  EXPECT_EQ(stores.order_status(order), 3);
  EXPECT_EQ(engine.callbacks("discrepancy"), 1.0);
}

TEST(Callback, FailureAfterSuccessIsAcknowledgedAndIgnored) {
  Stores stores;
  const Pending p(stores);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  ASSERT_EQ(engine.notify(signed_body(stores.id("cb-ok"), p.payment, 1)).status, 200);

  const auto late = engine.notify(signed_body(stores.id("cb-late-fail"), p.payment, 2));
  EXPECT_EQ(late.status, 200) << late.body << late.error;
  EXPECT_EQ(late.body, "success");
  EXPECT_EQ(stores.payment_status(p.payment), 1);
  EXPECT_TRUE(stores.payment_paid_at_set(p.payment));
  EXPECT_EQ(stores.order_status(p.order), 1);
  expect_seats(stores, p, "2:" + p.order);
  EXPECT_EQ(engine.callbacks("ignored"), 1.0);
}

TEST(Callback, MarkSoldFailpointAnswers503AndIsCounted) {
  Stores stores;
  const Pending p(stores);
  TestEngine engine(EnvOverrides{{"SEATFLOW_FAILPOINTS", "mark_sold=error"}});
  ASSERT_TRUE(engine.healthy());
  const auto callback_id = stores.id("cb1");

  const auto response = engine.notify(signed_body(callback_id, p.payment, 1));
  EXPECT_EQ(response.status, 503) << response.body << response.error;
  EXPECT_FALSE(response.header("retry-after").empty());
  EXPECT_EQ(stores.payment_status(p.payment), 0);
  EXPECT_EQ(stores.order_status(p.order), 0);
  EXPECT_FALSE(stores.log_row(callback_id).has_value());
  expect_seats(stores, p, "1:" + p.order);

  const auto hits =
      metric_value(engine.metrics(), R"(seatflow_failpoint_hits_total{name="mark_sold"})");
  ASSERT_TRUE(hits.has_value());
  EXPECT_GT(*hits, 0.0);
}

// Two io threads (one io_context each, connections spread over both): a storm over many keep-alive
// connections is answered completely, every copy counted exactly once, nothing applied twice.
TEST(Callback, StormOverTwoIoThreadsCountsEveryCopyOnce) {
  Stores stores;
  constexpr int kPayments = 4;
  constexpr int kConnections = 8;
  constexpr int kCopiesPerConnection = 40;
  std::vector<Pending> payments;
  std::vector<std::string> bodies;
  std::vector<std::string> ids;
  for (int i = 0; i < kPayments; ++i) {
    payments.emplace_back(stores, std::to_string(i));
    ids.push_back(stores.id("storm" + std::to_string(i)));
    bodies.push_back(signed_body(ids.back(), payments.back().payment, 1));
  }
  TestEngine engine(EnvOverrides{{"SEATFLOW_HTTP_IO_THREADS", "2"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  std::atomic<int> acked{0};
  std::atomic<int> other{0};
  std::vector<std::thread> senders;
  for (int c = 0; c < kConnections; ++c) {
    senders.emplace_back([&, c] {
      auto client = engine.connect();
      for (int n = 0; n < kCopiesPerConnection && client->connected(); ++n) {
        const auto& body = bodies[static_cast<std::size_t>((c + n) % kPayments)];
        const auto reply = client->post_json(kHmacNotifyPath, body);
        (reply.status == 200 && reply.body == "success" ? acked : other).fetch_add(1);
      }
    });
  }
  for (auto& sender : senders) {
    sender.join();
  }
  const int total = kConnections * kCopiesPerConnection;
  EXPECT_EQ(acked.load(), total);
  EXPECT_EQ(other.load(), 0);
  for (int i = 0; i < kPayments; ++i) {
    const auto& p = payments[static_cast<std::size_t>(i)];
    EXPECT_EQ(stores.log_rows_for_payment(p.payment), 1);
    EXPECT_EQ(stores.await_duplicate_count(ids[static_cast<std::size_t>(i)], total / kPayments - 1),
              total / kPayments - 1);
    EXPECT_EQ(stores.payment_status(p.payment), 1);
    expect_seats(stores, p, "2:" + p.order);
  }
  EXPECT_EQ(engine.callbacks("applied"), kPayments);
  EXPECT_EQ(engine.callbacks("duplicate"), total - kPayments);
  // Some copies were folded into a callback in flight or answered by its actor; the rest were
  // answered on the io threads, and never more than the duplicates there were.
  const auto on_io =
      metric_value(engine.metrics(), "seatflow_duplicates_answered_on_io_thread_total");
  ASSERT_TRUE(on_io.has_value());
  EXPECT_GT(*on_io, 0.0);
  EXPECT_LE(*on_io, total - kPayments);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

// Stripe's API dialects end to end: their real requests through net::HttpClient over loopback
// HTTPS (the test CA) to the fake Stripe API (tests/support/fake_stripe.hpp), which checks the
// bearer key, keeps refunds idempotent and pages balance transactions as Stripe does.
#include <gtest/gtest.h>

#include <vector>

#include "channels/stripe/stripe_bill.hpp"
#include "channels/stripe/stripe_query.hpp"
#include "channels/stripe/stripe_refund.hpp"
#include "codec/digest.hpp"
#include "domain/clock.hpp"
#include "net/http_client.hpp"
#include "support/fake_stripe.hpp"
#include "support/rejections.hpp"
#include "support/test_http_server.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using channels::QueryState;
using testing::FakeAnswer;
using testing::FakeIntent;
using testing::rejection_detail;

const std::string kKey = "sk_test_integration_51Hx0cQ2";
constexpr net::ClientLimits kLimits{1000, 1000, 1024 * 1024};
// 2026-12-05 in UTC, the bill's day.
const channels::BillDay kDay{"2026-12-05", 1'796'428'800'000, 1'796'515'200'000};
constexpr std::int64_t kDayStartS = 1'796'428'800;

const net::HttpClient& client() {
  static const net::HttpClient instance(kLimits, testing::make_test_ca().ca_pem_path);
  return instance;
}

channels::StripeApiConfig api(const testing::FakeStripe& fake, const std::string& key = kKey) {
  return {key, net::parse_url(fake.url()).value(), "cny"};
}

// The answer of an exchange that must bring one (the fake gateway is on loopback).
net::Response answered(const domain::Result<net::Response>& response) {
  EXPECT_TRUE(response.ok()) << (response.ok() ? std::string() : response.detail());
  return response.ok() ? response.value() : net::Response{};
}

channels::Result<channels::QueryAnswer> ask(const channels::StripeQuery& query,
                                            const std::string& payment_no) {
  const channels::QueryTarget target{payment_no, 5000};
  return query.answer(target, answered(client().send(query.request(target, 0))), 0);
}

TEST(StripeGateway, TheSearchFindsEachIntentByItsPaymentNo) {
  testing::FakeStripe fake(kKey);
  fake.add_intent("P-paid", FakeIntent{"pi_paid", "succeeded", 5000});
  fake.add_intent("P-wait", FakeIntent{"pi_wait", "processing", 5000});
  fake.add_intent("P-declined",
                  FakeIntent{"pi_declined", "requires_payment_method", 5000, "cny", true});
  fake.add_intent("P-new", FakeIntent{"pi_new", "requires_payment_method", 5000});
  fake.add_intent("P-o'dd", FakeIntent{"pi_odd", "canceled", 5000});
  fake.add_intent("P-twice", FakeIntent{"pi_twice_1", "succeeded", 5000});
  fake.add_intent("P-twice", FakeIntent{"pi_twice_2", "canceled", 5000});
  const channels::StripeQuery query(api(fake));
  const std::vector<std::pair<std::string, QueryState>> cases{
      {"P-paid", QueryState::paid},       {"P-wait", QueryState::pending},
      {"P-declined", QueryState::failed}, {"P-new", QueryState::pending},
      {"P-o'dd", QueryState::failed},     {"P-nobody", QueryState::not_found}};
  for (const auto& [payment_no, state] : cases) {
    const auto answer = ask(query, payment_no);
    ASSERT_TRUE(answer.ok()) << payment_no << ": " << answer.detail();
    EXPECT_EQ(answer.value().state, state) << payment_no;
  }
  EXPECT_EQ(ask(query, "P-paid").value().trade_no, "pi_paid");
  EXPECT_NE(rejection_detail(ask(query, "P-twice")).find("more than one"), std::string::npos);
  for (const auto mode :
       {FakeAnswer::other_payment, FakeAnswer::other_amount, FakeAnswer::malformed_json}) {
    fake.set_answer(mode);
    EXPECT_EQ(testing::reason_of(ask(query, "P-paid")), channels::errc::rejected_answer);
  }
  fake.set_answer(FakeAnswer::honest);
  const channels::StripeQuery stranger(api(fake, "sk_test_not_this_account"));
  EXPECT_EQ(rejection_detail(ask(stranger, "P-paid")),
            "Stripe answered 401 code invalid_request_error");
  EXPECT_EQ(fake.refused_signatures(), 1);
}

TEST(StripeGateway, ARefundRetriedUnderItsKeyIsTheSameRefundNeverASecond) {
  testing::FakeStripe fake(kKey);
  fake.add_intent("P-1", FakeIntent{"pi_1", "succeeded", 5000});
  const channels::StripeRefund refund(api(fake));
  const channels::RefundTarget target{"P-1", "rfd_retry_1", 5000,
                                      "paid after the order was cancelled", "pi_1"};
  const auto send = [&] {
    return refund.refund_answer(
        target, answered(client().send(refund.refund_request(target, 0).value())), 0);
  };
  fake.set_answer(FakeAnswer::malformed_json);  // the refund is made, its answer lost
  EXPECT_EQ(testing::reason_of(send()), channels::errc::rejected_answer);
  fake.set_answer(FakeAnswer::honest);
  const auto again = send();
  ASSERT_TRUE(again.ok()) << again.detail();
  EXPECT_EQ(again.value().state, channels::RefundState::succeeded);
  EXPECT_EQ(again.value().gateway_refund_no, "re_fake_1_pi_1");
  EXPECT_EQ(fake.refund_requests(), (std::vector<std::string>{"rfd_retry_1", "rfd_retry_1"}));
  EXPECT_EQ(fake.refunds_made(), 1);
  EXPECT_EQ(fake.refunded_cents(), 5000);
  EXPECT_EQ(fake.last_refund_form().at("metadata[refundNo]"), "rfd_retry_1");
  // Another refund number for the same intent: Stripe refuses, the money went back once.
  auto second = target;
  second.refund_no = "rfd_retry_2";
  const auto refused = refund.refund_answer(
      second, answered(client().send(refund.refund_request(second, 0).value())), 0);
  ASSERT_TRUE(refused.ok()) << refused.detail();
  EXPECT_EQ(refused.value().state, channels::RefundState::refused);
  EXPECT_EQ(refused.value().reason, "Stripe answered 400 code charge_already_refunded");
  EXPECT_EQ(fake.refunds_made(), 1);
}

// A sink that keeps what it is given, as the runner's would load it.
struct Rows final : channels::BillRowSink {
  std::vector<channels::BillRow> rows;
  channels::Result<void> row(const channels::BillRow& row) override {
    rows.push_back(row);
    return {};
  }
};

TEST(StripeGateway, TheBillIsReadInThreePagesUntilHasMoreIsFalse) {
  testing::FakeStripe fake(kKey);
  // 240 charges, 5 refunds and 5 payouts in the day; one charge the day before and one after.
  for (int i = 0; i < 240; ++i) {
    fake.add_charge("pi_" + std::to_string(i), "P-" + std::to_string(i), 5000, 175,
                    kDayStartS + 60 + i * 300);
  }
  for (int i = 0; i < 5; ++i) {
    fake.add_refund("pi_" + std::to_string(i), "re_" + std::to_string(i),
                    i % 2 == 0 ? "rfd_" + std::to_string(i) : "", 5000, kDayStartS + 80'000 + i);
    fake.add_other("payout", -100'000, kDayStartS + 3600 * (i + 1));
  }
  fake.add_charge("pi_before", "P-before", 5000, 175, kDayStartS - 1);
  fake.add_charge("pi_after", "P-after", 5000, 175, kDayStartS + 86'400);
  const channels::StripeBill bill(api(fake));
  Rows sink;
  channels::BillCursor cursor;
  std::string pages;
  auto request = bill.bill_request(kDay, domain::unix_time_ms());
  channels::BillStep step;
  for (int sent = 0; sent < 10; ++sent) {
    const auto response = answered(client().send(request));
    pages += response.body;
    auto taken = bill.step(kDay, {}, cursor, response, sink, domain::unix_time_ms());
    ASSERT_TRUE(taken.ok()) << taken.detail();
    step = std::move(taken).value();
    if (step.kind != channels::BillStep::Kind::next) {
      break;
    }
    request = *step.next;
  }
  ASSERT_EQ(step.kind, channels::BillStep::Kind::done);
  const auto targets = fake.bill_requests();
  ASSERT_EQ(targets.size(), 3U);
  EXPECT_EQ(targets[0].find("starting_after"), std::string::npos);
  EXPECT_NE(targets[1].find("starting_after=txn_"), std::string::npos);
  EXPECT_EQ(step.summary.rows, 245U);  // the payouts are not reconciled
  EXPECT_EQ(step.summary.sha256, codec::sha256_hex(pages));
  ASSERT_EQ(sink.rows.size(), 245U);
  int refunds = 0;
  for (const auto& row : sink.rows) {
    EXPECT_NE(row.trade_no, "pi_before");
    EXPECT_NE(row.trade_no, "pi_after");
    EXPECT_EQ(row.amount_cents, 5000);
    refunds += row.kind == channels::BillRowKind::refund ? 1 : 0;
  }
  EXPECT_EQ(refunds, 5);
  // A page cut short fails the bill.
  fake.set_answer(FakeAnswer::malformed_json);
  channels::BillCursor again;
  Rows more;
  const auto cut =
      bill.step(kDay, {}, again, answered(client().send(bill.bill_request(kDay, 0))), more, 0);
  EXPECT_EQ(testing::reason_of(cut), channels::errc::rejected_answer);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

// The dev mock gateway's own gateway APIs (dev/mock_gateway.hpp), driven by SeatFlow's hmac query
// and refund dialects as the engine sends and reads them: what it answers before and after it
// settled a payment, and what it refuses. The routes through a running engine are the functional
// tests' (tests/functional/api_test.cpp, active_query_test.cpp, discrepancy_refund_test.cpp).
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <variant>

#include "channels/hmac/hmac_payment.hpp"
#include "channels/hmac/hmac_query.hpp"
#include "channels/hmac/hmac_refund.hpp"
#include "dev/mock_gateway.hpp"
#include "domain/clock.hpp"

namespace seatflow::dev {
namespace {
namespace SEATFLOW_UNITY_ID {

const std::string kSecret = "mock-gateway-unit-secret";
constexpr std::int64_t kWindowMs = 300'000;

net::Url gateway_url() {
  return net::parse_url("http://127.0.0.1:8080").value();
}

MockGatewaySettings settings() {
  MockGatewaySettings out;
  out.secrets = {kSecret};
  out.window_ms = kWindowMs;
  return out;
}

// The open route's answer to `request`; nullopt when the path is none of the mock's.
std::optional<http::HttpResponse> ask(const MockGateway& gateway, const net::Request& request) {
  http::HttpRequest in;
  in.method = request.method;
  in.target = request.url.target;
  in.body = request.body;
  std::optional<http::HttpResponse> answer;
  http::Respond respond = [&answer](http::HttpResponse response) { answer = std::move(response); };
  const auto path = std::string_view(in.target).substr(0, in.target.find('?'));
  const bool taken = gateway.open_route(in, path, respond);
  EXPECT_EQ(taken, answer.has_value()) << in.target;
  return answer;
}

net::Response as_net(const http::HttpResponse& response) {
  return {response.status, {}, response.body};
}

constexpr const char* kNotifyUrl = "http://127.0.0.1:9/api/payment/notify/hmac";

// SeatFlow's own hmac payment dialect, the engine's side of the wire, signing with `secret`.
channels::HmacPayment dialect(const std::string& secret = kSecret) {
  return channels::HmacPayment(channels::HmacConfig{{secret}, kWindowMs}, gateway_url());
}

channels::CreateTarget create_target(const std::string& payment_no, std::int64_t amount_cents,
                                     std::int64_t expires_at_ms = 0) {
  return {payment_no, "ord-" + payment_no, amount_cents, expires_at_ms, kNotifyUrl, "seats"};
}

// The mock's answer to the dialect's create, as the dialect reads it.
channels::Result<channels::CreateAnswer> create_at(const MockGateway& gateway,
                                                   const channels::CreateTarget& target,
                                                   const std::string& secret = kSecret) {
  const auto now = domain::unix_time_ms();
  const auto answer = ask(gateway, dialect(secret).create_request(target, now).value());
  EXPECT_TRUE(answer.has_value());
  return dialect().create_answer(target, as_net(*answer), now);
}

// The close state the dialect reads from the mock's answer ("" when the answer was rejected).
std::string close_state(const MockGateway& gateway, const std::string& payment_no) {
  const auto now = domain::unix_time_ms();
  const channels::CloseTarget target{payment_no, {}};
  const auto answer = ask(gateway, dialect().close_request(target, now).value());
  EXPECT_TRUE(answer.has_value());
  const auto read = dialect().close_answer(target, as_net(*answer), now);
  EXPECT_TRUE(read.ok()) << read.detail() << " " << answer->body;
  return read.ok() ? read.value().reason : std::string();
}

MockTake demand(const std::string& payment_no) {
  const auto now = domain::unix_time_ms();
  return {payment_no, 1, 0, MockOrigin::demand, now, now};
}

TEST(MockGatewayRoutes, TheQueryApiAnswersWhatTheBookSettled) {
  const auto gateway = std::make_shared<MockGateway>(settings());
  const channels::HmacChannel verifier(channels::HmacConfig{{kSecret}, kWindowMs});
  const channels::HmacQuery query(verifier, gateway_url());
  const channels::QueryTarget target{"pay-1", 5000};

  const auto pending = ask(*gateway, query.request(target, domain::unix_time_ms()));
  ASSERT_TRUE(pending.has_value());
  EXPECT_EQ(pending->status, 202);
  const auto before = query.answer(target, as_net(*pending), domain::unix_time_ms());
  ASSERT_TRUE(before.ok()) << before.detail();
  EXPECT_EQ(before.value().state, channels::QueryState::pending);

  gateway->book().settle("pay-1", 1);
  const auto paid = ask(*gateway, query.request(target, domain::unix_time_ms()));
  ASSERT_TRUE(paid.has_value());
  EXPECT_EQ(paid->status, 200);
  EXPECT_EQ(paid->content_type, "application/json");
  const auto after = query.answer(target, as_net(*paid), domain::unix_time_ms());
  ASSERT_TRUE(after.ok()) << after.detail();
  EXPECT_EQ(after.value().state, channels::QueryState::paid);

  // Another secret does not verify the mock's signature.
  const channels::HmacChannel stranger(channels::HmacConfig{{"another-secret"}, kWindowMs});
  const channels::HmacQuery doubting(stranger, gateway_url());
  EXPECT_EQ(doubting.answer(target, as_net(*paid), domain::unix_time_ms()).error(),
            channels::errc::rejected_answer);
}

TEST(MockGatewayRoutes, TheRefundApiRefundsOnlyWhatWasPaid) {
  const auto gateway = std::make_shared<MockGateway>(settings());
  const channels::HmacRefund refund(channels::HmacConfig{{kSecret}, kWindowMs}, gateway_url());
  const channels::RefundTarget target{"pay-2", "rfd_0123456789abcdef0123", 5000, "test"};

  const auto refused = ask(*gateway, refund.refund_request(target, domain::unix_time_ms()).value());
  ASSERT_TRUE(refused.has_value());
  ASSERT_EQ(refused->status, 200) << refused->body;
  const auto not_paid = refund.refund_answer(target, as_net(*refused), domain::unix_time_ms());
  ASSERT_TRUE(not_paid.ok()) << not_paid.detail();
  EXPECT_EQ(not_paid.value().state, channels::RefundState::refused);

  gateway->book().settle("pay-2", 1);
  const auto done = ask(*gateway, refund.refund_request(target, domain::unix_time_ms()).value());
  ASSERT_TRUE(done.has_value());
  const auto answer = refund.refund_answer(target, as_net(*done), domain::unix_time_ms());
  ASSERT_TRUE(answer.ok()) << answer.detail();
  EXPECT_EQ(answer.value().state, channels::RefundState::succeeded);
  EXPECT_EQ(answer.value().reason, "refunded by the mock gateway");

  // A request signed with another secret is refused before the book is read.
  const channels::HmacRefund stranger(channels::HmacConfig{{"another-secret"}, kWindowMs},
                                      gateway_url());
  const auto unsigned_answer =
      ask(*gateway, stranger.refund_request(target, domain::unix_time_ms()).value());
  ASSERT_TRUE(unsigned_answer.has_value());
  EXPECT_EQ(unsigned_answer->status, 401);
}

TEST(MockGatewayRoutes, OtherMethodsAre405AndOtherPathsAreNotItsOwn) {
  const auto gateway = std::make_shared<MockGateway>(settings());
  net::Request request;
  request.url = gateway_url();
  request.method = "POST";
  request.url.target = "/api/gateway/payments/pay-3";
  const auto post_query = ask(*gateway, request);
  ASSERT_TRUE(post_query.has_value());
  EXPECT_EQ(post_query->status, 405);
  request.method = "GET";
  request.url.target = "/api/gateway/refunds";
  const auto get_refund = ask(*gateway, request);
  ASSERT_TRUE(get_refund.has_value());
  EXPECT_EQ(get_refund->status, 405);
  request.url.target = "/api/gateway/payments/";
  const auto empty = ask(*gateway, request);
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->status, 404);
  for (const char* other : {"/api/orders", "/api/gateway/refundsx", "/healthz", "/api/gateway"}) {
    request.url.target = other;
    EXPECT_FALSE(ask(*gateway, request).has_value()) << other;
  }
}

TEST(MockGatewayBook, TheTakeVerdictOfEveryOrigin) {
  constexpr std::int64_t kNow = 1'000'000;
  const MockCreated open{5000, kNow + 1, kNotifyUrl, "http://pay", 0};
  const MockCreated no_deadline{5000, 0, kNotifyUrl, "http://pay", 0};
  const MockCreated expired{5000, kNow, kNotifyUrl, "http://pay", 0};
  const MockCreated closed{5000, kNow + 1, kNotifyUrl, "http://pay", kNow - 1};
  struct Case {
    const MockCreated* created;
    bool settled;
    MockOrigin origin;
    MockVerdict verdict;
  };
  using O = MockOrigin;
  using V = MockVerdict;
  const Case cases[] = {
      // Never created here: as before SPEC §16, but a creation's own callback finds it forgotten.
      {nullptr, false, O::committed, V::send},
      {nullptr, true, O::demand, V::send},
      {nullptr, false, O::created, V::forgotten},
      // Closed, then past the deadline: nothing is taken, whoever asks.
      {&closed, false, O::demand, V::closed},
      {&closed, false, O::created, V::closed},
      {&closed, true, O::committed, V::closed},
      {&expired, false, O::demand, V::expired},
      {&expired, false, O::created, V::expired},
      {&expired, false, O::committed, V::expired},
      // Open: the creation's callback once, the engine's commit's never, on demand always.
      {&open, false, O::created, V::send},
      {&open, true, O::created, V::settled},
      {&open, false, O::committed, V::created_here},
      {&open, true, O::demand, V::send},
      {&no_deadline, false, O::created, V::send},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(take_verdict(c.created, c.settled, c.origin, kNow), c.verdict)
        << "origin " << static_cast<int>(c.origin) << " settled " << c.settled << " expected "
        << to_string(c.verdict);
  }
}

TEST(MockGatewayRoutes, CreateIsSignedBothWaysAndTheSamePaymentGetsTheSamePayUrl) {
  const auto gateway = std::make_shared<MockGateway>(settings());
  // Before it knows its address it has no pay URL to give: a signed refusal.
  const auto early = create_at(*gateway, create_target("pay-c", 5000));
  ASSERT_TRUE(early.ok()) << early.detail();
  EXPECT_FALSE(early.value().created);
  EXPECT_EQ(early.value().reason, "not_ready");
  gateway->serve_at("127.0.0.1", 8080);

  // A forgery creates nothing (401: the dialect rejects the unsigned answer); malformed is 400.
  const auto now = domain::unix_time_ms();
  const auto forged =
      ask(*gateway,
          dialect("another-secret").create_request(create_target("pay-c", 5000), now).value());
  EXPECT_EQ(forged->status, 401);
  EXPECT_FALSE(gateway->book().created("pay-c").has_value());
  auto malformed = dialect().create_request(create_target("pay-c", 5000), now).value();
  malformed.body = R"({"paymentNo":"pay-c","amountCents":"5000"})";
  EXPECT_EQ(ask(*gateway, malformed)->status, 400);

  const auto first = create_at(*gateway, create_target("pay-c", 5000));
  ASSERT_TRUE(first.ok()) << first.detail();
  EXPECT_TRUE(first.value().created);
  EXPECT_EQ(first.value().value, "http://127.0.0.1:8080/api/mock-gateway/checkout/pay-c");
  const auto again = create_at(*gateway, create_target("pay-c", 5000));
  ASSERT_TRUE(again.ok()) << again.detail();
  EXPECT_EQ(again.value().value, first.value().value);
  const auto other = create_at(*gateway, create_target("pay-c", 5001));
  ASSERT_TRUE(other.ok()) << other.detail();
  EXPECT_FALSE(other.value().created);
  EXPECT_EQ(other.value().reason, "amount_mismatch");
  EXPECT_EQ(gateway->book().created("pay-c")->amount_cents, 5000);
  // Past its deadline already: refused, nothing created.
  const auto late = create_at(*gateway, create_target("pay-late", 5000, now - 1));
  ASSERT_TRUE(late.ok()) << late.detail();
  EXPECT_EQ(late.value().reason, "expired");
  EXPECT_FALSE(gateway->book().created("pay-late").has_value());
}

TEST(MockGatewayRoutes, CloseAnswersClosedPaidOrNotFoundAndAClosedPaymentTakesNone) {
  const auto gateway = std::make_shared<MockGateway>(settings());
  gateway->serve_at("127.0.0.1", 8080);
  ASSERT_TRUE(create_at(*gateway, create_target("pay x", 5000)).value().created);
  EXPECT_EQ(close_state(*gateway, "pay x"), "closed");
  EXPECT_EQ(close_state(*gateway, "pay x"), "closed");
  EXPECT_EQ(gateway->book().take(demand("pay x")).verdict, MockVerdict::closed);
  EXPECT_FALSE(gateway->book().status_of("pay x").has_value());

  // Never created here: not_found, and from then on it takes no payment either.
  EXPECT_EQ(close_state(*gateway, "pay-n"), "not_found");
  EXPECT_EQ(gateway->book().take(demand("pay-n")).verdict, MockVerdict::closed);
  EXPECT_EQ(create_at(*gateway, create_target("pay-n", 5000)).value().reason, "closed");

  // Paid first: the close says paid and closes nothing.
  ASSERT_TRUE(create_at(*gateway, create_target("pay-p", 5000)).value().created);
  EXPECT_EQ(gateway->book().take(demand("pay-p")).verdict, MockVerdict::send);
  EXPECT_EQ(close_state(*gateway, "pay-p"), "paid");
  EXPECT_EQ(gateway->book().created("pay-p")->closed_at_ms, 0);

  // The path's payment must be the body's; the close is signed.
  const auto now = domain::unix_time_ms();
  auto other = dialect().close_request({"pay-p", {}}, now).value();
  other.url.target = channels::hmac_close_path("pay-y");
  EXPECT_EQ(ask(*gateway, other)->status, 400);
  const auto forged = dialect("another-secret").close_request({"pay-y", {}}, now).value();
  EXPECT_EQ(ask(*gateway, forged)->status, 401);
  EXPECT_FALSE(gateway->book().created("pay-y").has_value());
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::dev

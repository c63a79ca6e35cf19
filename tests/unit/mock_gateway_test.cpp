// The dev mock gateway's own gateway APIs (dev/mock_gateway.hpp), driven by SeatFlow's hmac query
// and refund dialects as the engine sends and reads them: what it answers before and after it
// settled a payment, and what it refuses. The routes through a running engine are the functional
// tests' (tests/functional/api_test.cpp, active_query_test.cpp, discrepancy_refund_test.cpp).
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <variant>

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

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::dev

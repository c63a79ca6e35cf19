// Active query without I/O (SPEC §10): the hmac query dialect's request and every answer it
// accepts or refuses, the callback an answer becomes, the schedule's steps and jitter, and the
// query settings.
#include <gtest/gtest.h>

#include <variant>

#include "actors/query_actor.hpp"
#include "channels/hmac/hmac_query.hpp"
#include "codec/digest.hpp"
#include "support/config_settings.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using channels::QueryAnswer;
using channels::QueryState;

constexpr std::int64_t kNow = 1'796'000'000'000;
const std::string kSecret = "query-test-secret";

class HmacQueryTest : public ::testing::Test {
 protected:
  HmacQueryTest()
      : verifier_(channels::HmacConfig{{kSecret}, 300'000}),
        query_(verifier_, net::parse_url("http://127.0.0.1:9000/gw/").value()) {}

  net::Response signed_answer(const std::string& callback_id, const std::string& payment_no,
                              int status, std::int64_t timestamp = kNow) const {
    return {200, {}, verifier_.signed_body(callback_id, payment_no, status, timestamp)};
  }

  channels::Result<channels::QueryAnswer> answer(const net::Response& response) const {
    return query_.answer({"pay-1", 5000}, response, kNow);
  }

  static std::string rejection(const channels::Result<channels::QueryAnswer>& result) {
    return result.ok() ? std::string("(accepted)") : result.detail();
  }

  channels::HmacChannel verifier_;
  channels::HmacQuery query_;
};

TEST_F(HmacQueryTest, AsksThePaymentsPathUnderTheGatewayBase) {
  const auto request = query_.request({"pay-1", 5000}, kNow);
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.url.host, "127.0.0.1");
  EXPECT_EQ(request.url.port, 9000);
  EXPECT_EQ(request.url.target, "/gw/api/gateway/payments/pay-1");
}

TEST_F(HmacQueryTest, PaidAndFailedAnswersAreVerifiedLikeCallbacks) {
  const auto paid = answer(signed_answer("query:pay-1:1", "pay-1", 1));
  ASSERT_TRUE(paid.ok()) << rejection(paid);
  EXPECT_EQ(paid.value().state, QueryState::paid);
  const auto failed = answer(signed_answer("query:pay-1:2", "pay-1", 2));
  ASSERT_TRUE(failed.ok()) << rejection(failed);
  EXPECT_EQ(failed.value().state, QueryState::failed);
}

TEST_F(HmacQueryTest, PendingAndNotFoundNeedNoSignatureBecauseTheyChangeNothing) {
  EXPECT_EQ((answer({202, {}, ""})).value().state, QueryState::pending);
  EXPECT_EQ((answer({404, {}, ""})).value().state, QueryState::not_found);
}

TEST_F(HmacQueryTest, EveryBadAnswerIsARejection) {
  const channels::HmacChannel forger(channels::HmacConfig{{"another-secret"}, 300'000});
  const net::Response forged{200, {}, forger.signed_body("query:pay-1:1", "pay-1", 1, kNow)};
  EXPECT_NE(rejection(answer(forged)).find("answer rejected"), std::string::npos);
  EXPECT_EQ(rejection(answer(signed_answer("query:pay-2:1", "pay-2", 1))),
            "the answer names another payment");
  EXPECT_EQ(rejection(answer(signed_answer("cb-1", "pay-1", 1))),
            "the answer's callbackId is not the query's");
  // A paid answer dressed with the failed id (and the reverse) is not the query's either.
  EXPECT_EQ(rejection(answer(signed_answer("query:pay-1:2", "pay-1", 1))),
            "the answer's callbackId is not the query's");
  EXPECT_NE(rejection(answer(signed_answer("query:pay-1:1", "pay-1", 1, kNow - 400'000)))
                .find("answer rejected"),
            std::string::npos);
  EXPECT_NE(rejection(answer({200, {}, "{not json"})).find("answer rejected"), std::string::npos);
  EXPECT_EQ(rejection(answer({500, {}, ""})), "unexpected HTTP status 500");
}

TEST(QueryCallback, PaidAndFailedAnswersBecomeCallbacksWithStableIds) {
  const channels::QueryTarget target{"pay-1", 5000};
  const auto paid =
      channels::callback_of(target, domain::Channel::alipay, {QueryState::paid, "T1", 5000});
  ASSERT_TRUE(paid);
  EXPECT_EQ(paid->callback_id, "query:pay-1:1");
  EXPECT_EQ(paid->kind, domain::CallbackKind::success);
  EXPECT_EQ(paid->channel, domain::Channel::alipay);
  EXPECT_EQ(paid->channel_trade_no, "T1");
  EXPECT_EQ(paid->amount_cents, 5000);
  EXPECT_EQ(paid->payload_sha256, codec::business_digest(*paid));
  // Asking again gives the same callback: an ordinary duplicate downstream.
  EXPECT_EQ(channels::callback_of(target, domain::Channel::alipay, {QueryState::paid, "T1", 5000})
                ->payload_sha256,
            paid->payload_sha256);
  const auto failed =
      channels::callback_of(target, domain::Channel::hmac, {QueryState::failed, {}, {}});
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->callback_id, "query:pay-1:2");
  EXPECT_EQ(failed->kind, domain::CallbackKind::failure);
  EXPECT_FALSE(channels::callback_of(target, domain::Channel::hmac, {QueryState::pending, {}, {}}));
  EXPECT_FALSE(
      channels::callback_of(target, domain::Channel::hmac, {QueryState::not_found, {}, {}}));
}

TEST(QuerySchedule, EachStepFollowsTheOneBeforeUntilTheScheduleEnds) {
  actors::QuerySettings settings;
  settings.schedule_ms = {60'000, 300'000, 600'000};
  settings.jitter_percent = 10;
  EXPECT_EQ(actors::next_query_delay_ms(settings, 1, 0.0), 300'000u);
  EXPECT_EQ(actors::next_query_delay_ms(settings, 2, 0.0), 600'000u);
  EXPECT_FALSE(actors::next_query_delay_ms(settings, 3, 0.0));
  EXPECT_FALSE(actors::next_query_delay_ms(settings, 99, 0.5));
  // Jitter only ever adds, and at most jitter_percent.
  EXPECT_EQ(actors::next_query_delay_ms(settings, 1, 0.5), 315'000u);
  EXPECT_EQ(actors::next_query_delay_ms(settings, 1, 1.0), 330'000u);
  EXPECT_EQ(actors::next_query_delay_ms(settings, 1, 7.0), 330'000u);
}

TEST(QueryConfig, DefaultsFollowTheSpec) {
  const auto result = testing::load_settings({});
  ASSERT_TRUE(result.config) << result.error;
  const auto& query = result.config->engine.query;
  EXPECT_TRUE(query.enabled);
  EXPECT_EQ(query.schedule_ms,
            (std::vector<std::uint32_t>{60'000, 300'000, 300'000, 300'000, 300'000, 300'000}));
  EXPECT_TRUE(result.config->query.hmac_gateway_url.empty() ==
              !result.config->mock_gateway.enabled);
}

TEST(QueryConfig, ScheduleRateAndGatewayAreRead) {
  const auto result =
      testing::load_settings({{"SEATFLOW_QUERY_SCHEDULE", "30s,2m,500ms"},
                              {"SEATFLOW_QUERY_RATE_PER_S", "5"},
                              {"SEATFLOW_QUERY", "off"},
                              {"SEATFLOW_HMAC_GATEWAY_URL", "https://gw.example/x"}});
  ASSERT_TRUE(result.config) << result.error;
  const auto& query = result.config->engine.query;
  EXPECT_EQ(query.schedule_ms, (std::vector<std::uint32_t>{30'000, 120'000, 500}));
  EXPECT_EQ(query.rate_per_s, 5u);
  EXPECT_FALSE(query.enabled);
  EXPECT_EQ(result.config->query.hmac_gateway_url, "https://gw.example/x");
}

TEST(QueryConfig, BadSettingsAreNamedInOneLine) {
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"SEATFLOW_QUERY_SCHEDULE", "soon"},
           {"SEATFLOW_QUERY_SCHEDULE", "10ms"},
           {"SEATFLOW_QUERY_SCHEDULE", ","},
           {"SEATFLOW_QUERY_RATE_PER_S", "0"},
           {"SEATFLOW_QUERY", "maybe"},
           {"SEATFLOW_HMAC_GATEWAY_URL", "gw.example"},
       }) {
    const auto result = testing::load_settings({{name, value}});
    EXPECT_FALSE(result.config) << name << "=" << value;
    EXPECT_NE(result.error.find(name), std::string::npos) << result.error;
  }
  const auto crossed = testing::load_settings(
      {{"SEATFLOW_QUERY_CONNECT_TIMEOUT_MS", "3000"}, {"SEATFLOW_QUERY_TIMEOUT_MS", "1000"}});
  EXPECT_FALSE(crossed.config);
  EXPECT_NE(crossed.error.find("SEATFLOW_QUERY_TIMEOUT_MS"), std::string::npos);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

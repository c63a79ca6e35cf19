// Discrepancy refunds over real HTTP (SPEC §12): a paid-after-cancel discrepancy made by a real
// signed callback on a closed payment, refunded through POST /api/discrepancies/{id}/refund — to a
// fake hmac gateway that verifies the request and answers signed, and to the dev mock gateway.
#include <gtest/gtest.h>

#include <future>
#include <nlohmann/json.hpp>

#include "support/engine_fixture.hpp"
#include "support/fake_gateways.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;

constexpr const char* kToken = "functional-refund-token-8e1f4a";

Response api(const TestEngine& engine, const std::string& method, const std::string& target,
             const json& body = nullptr) {
  return engine.api(method, target, kToken, body.is_null() ? std::string() : body.dump());
}

json body_of(const Response& response) {
  return json::parse(response.body, nullptr, false);
}

// An hmac payment created, closed here without its gateway (force: its order cancelled, the
// gateway still takes money) and then paid by a real signed callback: the discrepancy's id, found
// through GET /api/discrepancies.
std::int64_t paid_after_cancel(const TestEngine& engine, Stores& stores, const std::string& name,
                               bool through_mock_gateway = false) {
  const auto order = stores.id(name + "-o");
  const auto payment = stores.id(name);
  EXPECT_EQ(api(engine, "POST", "/api/orders",
                {{"orderNo", order},
                 {"userId", "u1"},
                 {"showId", stores.id("show")},
                 {"seatIds", {name + "-seat"}},
                 {"amountCents", 5000}})
                .status,
            201);
  EXPECT_EQ(api(engine, "POST", "/api/payments",
                {{"orderNo", order}, {"channel", "hmac"}, {"paymentNo", payment}})
                .status,
            201);
  EXPECT_EQ(api(engine, "POST", "/api/payments/" + payment + "/close", {{"force", true}}).status,
            200);
  if (through_mock_gateway) {
    const auto paid =
        api(engine, "POST", "/api/mock-gateway/pay", {{"paymentNo", payment}, {"success", true}});
    EXPECT_EQ(paid.status, 200) << paid.body;
    EXPECT_EQ(body_of(paid)["notifyStatus"], 200) << paid.body;
  } else {
    const auto late = engine.notify(signed_body(stores.id(name + "-cb"), payment, 1));
    EXPECT_EQ(late.status, 200) << late.body;
  }
  const auto listed = api(engine, "GET", "/api/discrepancies?limit=500");
  for (const auto& row : body_of(listed)) {
    if (row["paymentNo"] == payment && row["kind"] == "paid_after_cancel") {
      EXPECT_TRUE(row["refund"].is_null());
      return row["id"].get<std::int64_t>();
    }
  }
  ADD_FAILURE() << "no paid_after_cancel discrepancy for " << payment << ": " << listed.body;
  return 0;
}

std::string refund_path(std::int64_t id) {
  return "/api/discrepancies/" + std::to_string(id) + "/refund";
}

bool listed_open(const TestEngine& engine, std::int64_t id) {
  for (const auto& row : body_of(api(engine, "GET", "/api/discrepancies?limit=500"))) {
    if (row["id"] == id) {
      return true;
    }
  }
  return false;
}

TEST(DiscrepancyRefundApi, APaidAfterCancelIsRefundedThroughTheGatewayOnce) {
  FakeHmacGateway gateway(kTestSecret);
  Stores stores;
  TestEngine engine({{"SEATFLOW_API_TOKEN", kToken},
                     {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                     {"SEATFLOW_HMAC_GATEWAY_URL", gateway.url()},
                     {"SEATFLOW_GATEWAY_CREATE", "off"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto id = paid_after_cancel(engine, stores, "late");
  ASSERT_GT(id, 0);
  gateway.set_trade(stores.id("late"), FakeTrade{"paid", 5000, ""});

  const auto refunded = api(engine, "POST", refund_path(id));
  ASSERT_EQ(refunded.status, 200) << refunded.body << engine.log();
  const auto body = body_of(refunded);
  EXPECT_EQ(body["id"], id);
  EXPECT_EQ(body["paymentNo"], stores.id("late"));
  EXPECT_EQ(body["kind"], "paid_after_cancel");
  EXPECT_FALSE(body["resolvedAt"].is_null());
  EXPECT_EQ(body["refund"]["status"], "succeeded");
  EXPECT_EQ(body["refund"]["reason"], "refunded");
  const auto refund_no = body["refund"]["refundNo"].get<std::string>();
  EXPECT_EQ(gateway.refund_requests(), std::vector<std::string>{refund_no});
  EXPECT_EQ(gateway.refunded_cents(), 5000);
  EXPECT_FALSE(listed_open(engine, id));
  // The outcome stays on the discrepancy, and the move is in the outbox.
  bool found = false;
  for (const auto& row : body_of(api(engine, "GET", "/api/discrepancies?open=false&limit=500"))) {
    if (row["id"] == id) {
      found = true;
      EXPECT_EQ(row["refund"]["status"], "succeeded");
      EXPECT_EQ(row["refund"]["refundNo"], refund_no);
    }
  }
  EXPECT_TRUE(found);
  const auto events = stores.events(stores.id("late"));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().event_id, "discrepancy.refunded:" + std::to_string(id));
  EXPECT_EQ(events.back().detail, refund_no);
  EXPECT_EQ(events.back().amount_cents, 5000);
  // The payment and order do not move: the money went back, the order stays cancelled.
  EXPECT_EQ(stores.payment_status(stores.id("late")), 3);
  EXPECT_EQ(stores.order_status(stores.id("late-o")), 2);

  // A second click: 409, and the gateway is not asked again.
  const auto again = api(engine, "POST", refund_path(id));
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_EQ(body_of(again)["error"], "the discrepancy is already refunded");
  EXPECT_EQ(gateway.refund_requests().size(), 1U);
  EXPECT_EQ(
      metric_value(engine.metrics(), R"(seatflow_refund_total{channel="hmac",result="succeeded"})"),
      std::optional<double>(1));

  EXPECT_EQ(api(engine, "POST", "/api/discrepancies/0/refund").status, 400);
  EXPECT_EQ(api(engine, "POST", "/api/discrepancies/999999999999/refund").status, 404);
  EXPECT_EQ(engine.api("POST", refund_path(id), "").status, 401);
}

TEST(DiscrepancyRefundApi, ARefusedRefundIs502AndTheDiscrepancyStaysOpen) {
  FakeHmacGateway gateway(kTestSecret);
  Stores stores;
  TestEngine engine({{"SEATFLOW_API_TOKEN", kToken},
                     {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                     {"SEATFLOW_HMAC_GATEWAY_URL", gateway.url()},
                     {"SEATFLOW_GATEWAY_CREATE", "off"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto id = paid_after_cancel(engine, stores, "refused");
  ASSERT_GT(id, 0);
  gateway.set_trade(stores.id("refused"), FakeTrade{"paid", 5000, ""});
  gateway.set_answer(FakeAnswer::refuse);
  const auto refused = api(engine, "POST", refund_path(id));
  ASSERT_EQ(refused.status, 502) << refused.body;
  EXPECT_EQ(body_of(refused)["error"], "gateway refused: balance not enough");
  EXPECT_EQ(body_of(refused)["refund"]["status"], "failed");
  EXPECT_TRUE(listed_open(engine, id));
  gateway.set_answer(FakeAnswer::honest);
  const auto retried = api(engine, "POST", refund_path(id));
  ASSERT_EQ(retried.status, 200) << retried.body;
  const auto requests = gateway.refund_requests();
  ASSERT_EQ(requests.size(), 2U);
  EXPECT_EQ(requests[0], requests[1]);
  EXPECT_FALSE(listed_open(engine, id));
}

TEST(DiscrepancyRefundApi, ASecondClickWhileTheGatewayIsSlowIs409AndOneRefundIsMade) {
  FakeHmacGateway gateway(kTestSecret);
  Stores stores;
  TestEngine engine({{"SEATFLOW_API_TOKEN", kToken},
                     {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                     {"SEATFLOW_HMAC_GATEWAY_URL", gateway.url()},
                     {"SEATFLOW_GATEWAY_CREATE", "off"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto id = paid_after_cancel(engine, stores, "slow");
  ASSERT_GT(id, 0);
  gateway.set_trade(stores.id("slow"), FakeTrade{"paid", 5000, ""});
  // The gateway answers after kFakeStallMs, within SEATFLOW_QUERY_TIMEOUT_MS (5 s).
  gateway.set_answer(FakeAnswer::stall);
  auto first = std::async(std::launch::async, [&] { return api(engine, "POST", refund_path(id)); });
  ASSERT_TRUE(wait_until([&] { return gateway.requests() == 1; }, std::chrono::seconds(5)));
  const auto second = api(engine, "POST", refund_path(id));
  EXPECT_EQ(second.status, 409) << second.body;
  EXPECT_EQ(body_of(second)["error"], "a refund of this discrepancy is in flight");
  const auto done = first.get();
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(gateway.refund_requests().size(), 1U);
  EXPECT_EQ(gateway.refunds_made(), 1);
  EXPECT_EQ(api(engine, "POST", refund_path(id)).status, 409);
}

TEST(DiscrepancyRefundApi, TheDevMockGatewayAnswersTheHmacRefundEndpoint) {
  Stores stores;
  TestEngine engine({{"SEATFLOW_API_TOKEN", kToken}, {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto id = paid_after_cancel(engine, stores, "mocked", true);
  ASSERT_GT(id, 0);
  const auto refunded = api(engine, "POST", refund_path(id));
  ASSERT_EQ(refunded.status, 200) << refunded.body << engine.log();
  EXPECT_EQ(body_of(refunded)["refund"]["reason"], "refunded by the mock gateway");
  EXPECT_FALSE(listed_open(engine, id));
  // The endpoint refuses an unsigned request.
  EXPECT_EQ(engine.request("POST", "/api/gateway/refunds", R"({"refundNo":"rfd_1"})").status, 401);
}

TEST(DiscrepancyRefundApi, AnEngineWithoutARefundGatewayAnswers409SayingSo) {
  TestEngine engine({{"SEATFLOW_API_TOKEN", kToken}, {"SEATFLOW_MOCK_GATEWAY", "off"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto refused = api(engine, "POST", refund_path(1));
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(body_of(refused)["error"],
            "not refundable here: no channel has a refund gateway configured (standard payments "
            "are never refundable through SeatFlow)");
  EXPECT_EQ(
      metric_value(engine.metrics(), R"(seatflow_refund_total{channel="hmac",result="succeeded"})"),
      std::nullopt);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

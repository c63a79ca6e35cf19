// Stripe's loop closed over real HTTP (SPEC §10, §12, §13): the engine started with
// SEATFLOW_STRIPE_API_KEY and the fake Stripe API (tests/support/fake_stripe.hpp) as
// SEATFLOW_STRIPE_API_URL over HTTPS. A lost webhook is settled by POST /api/payments/{no}/sync
// through the PaymentIntent search; a Stripe paid_after_cancel is refunded through POST
// /v1/refunds, and a retry after a lost answer reuses the Idempotency-Key, so the money goes back
// once.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "channels/stripe/stripe_channel.hpp"
#include "support/engine_fixture.hpp"
#include "support/fake_stripe.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"
#include "support/test_http_server.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;

constexpr const char* kToken = "functional-stripe-api-token-3b7e2d";
const std::string kApiKey = "sk_test_functional_4f9a2c81e6d0b7";
const std::string kWebhookSecret = "whsec_functional_stripe_api_secret_8d1c";

EnvOverrides stripe_env(const FakeStripe& fake, EnvOverrides extra = {}) {
  EnvOverrides env{{"SEATFLOW_API_TOKEN", kToken},
                   {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                   {"SEATFLOW_STRIPE_WEBHOOK_SECRETS", kWebhookSecret},
                   {"SEATFLOW_STRIPE_API_KEY", kApiKey},
                   {"SEATFLOW_STRIPE_API_URL", fake.url()},
                   {"SEATFLOW_QUERY_CA_FILE", make_test_ca().ca_pem_path},
                   {"SEATFLOW_QUERY_SCHEDULE", "10m"},
                   // These payments' intents are made by the tests (a lost webhook, a late one).
                   {"SEATFLOW_GATEWAY_CREATE", "off"}};
  for (auto& [name, value] : extra) {
    env[name] = value;
  }
  return env;
}

Response api(const TestEngine& engine, const std::string& method, const std::string& target,
             const json& body = nullptr) {
  return engine.api(method, target, kToken, body.is_null() ? std::string() : body.dump());
}

json body_of(const Response& response) {
  return json::parse(response.body, nullptr, false);
}

// An order of one seat and its stripe payment, through the API; the payment number.
std::string stripe_payment(const TestEngine& engine, Stores& stores, const std::string& name) {
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
  const auto created = api(engine, "POST", "/api/payments",
                           {{"orderNo", order}, {"channel", "stripe"}, {"paymentNo", payment}});
  EXPECT_EQ(created.status, 201) << created.body;
  return payment;
}

TEST(StripeApi, SyncSettlesALostWebhookThroughThePaymentIntentSearch) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeStripe stripe(kApiKey);
  TestEngine engine(stripe_env(stripe, {{"SEATFLOW_PG_DSN", db.dsn()},
                                        {"SEATFLOW_EVENT_SLOT", db.slot()},
                                        {"SEATFLOW_QUERY", "on"}}));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto payment = stripe_payment(engine, stores, "sync");
  const auto sync = "/api/payments/" + payment + "/sync";
  const auto unknown = body_of(api(engine, "POST", sync));
  EXPECT_EQ(unknown["query"]["result"], "not_found") << unknown;
  stripe.add_intent(payment, FakeIntent{"pi_3SyncLostWebhook", "succeeded", 5000});
  stripe.set_answer(FakeAnswer::other_amount);
  const auto forged = body_of(api(engine, "POST", sync));
  EXPECT_EQ(forged["query"]["result"], "rejected") << forged;
  EXPECT_EQ(forged["status"], "PENDING");
  stripe.set_answer(FakeAnswer::honest);
  const auto paid = body_of(api(engine, "POST", sync));
  EXPECT_EQ(paid["query"]["result"], "paid") << paid;
  EXPECT_EQ(paid["query"]["outcome"], "applied");
  EXPECT_EQ(paid["status"], "SUCCESS");
  EXPECT_EQ(paid["channelTradeNo"], "pi_3SyncLostWebhook");
  EXPECT_EQ(stores.order_status(stores.id("sync-o")), 1);
  EXPECT_EQ(stripe.refused_signatures(), 0);  // every request carried the key
  EXPECT_EQ(metric_value(engine.metrics(),
                         R"(seatflow_payment_query_total{channel="stripe",result="paid"})"),
            1);
  EXPECT_EQ(engine.log().find(kApiKey), std::string::npos) << "the API key is never logged";
}

// A stripe payment closed, then paid by a late signed webhook: its paid_after_cancel id.
std::int64_t stripe_paid_after_cancel(const TestEngine& engine, Stores& stores,
                                      const std::string& name, const std::string& intent) {
  const auto payment = stripe_payment(engine, stores, name);
  EXPECT_EQ(api(engine, "POST", "/api/payments/" + payment + "/close").status, 200);
  channels::StripeEvent event;
  event.id = "evt_" + stores.id(name);
  event.payment_no = payment;
  event.payment_intent_id = intent;
  event.amount = 5000;
  event.created_s = domain::unix_time_ms() / 1000;
  const channels::StripeChannel signer(channels::StripeConfig{{kWebhookSecret}});
  const auto body = channels::stripe_event_body(event);
  const auto late = engine.connect()->request(
      "POST", "/api/payment/notify/stripe", body,
      {{"Content-Type", "application/json"},
       {"Stripe-Signature",
        channels::stripe_signature_header(signer.keys(), event.created_s, body)}});
  EXPECT_EQ(late.status, 200) << late.body;
  for (const auto& row : body_of(api(engine, "GET", "/api/discrepancies?limit=500"))) {
    if (row["paymentNo"] == payment && row["kind"] == "paid_after_cancel") {
      return row["id"].get<std::int64_t>();
    }
  }
  ADD_FAILURE() << "no paid_after_cancel discrepancy for " << payment;
  return 0;
}

bool open_discrepancy(const TestEngine& engine, std::int64_t id) {
  for (const auto& row : body_of(api(engine, "GET", "/api/discrepancies?limit=500"))) {
    if (row["id"] == id) {
      return true;
    }
  }
  return false;
}

TEST(StripeApi, APaidAfterCancelIsRefundedOnceEvenWhenTheFirstAnswerIsLost) {
  Stores stores;
  FakeStripe stripe(kApiKey);
  TestEngine engine(stripe_env(stripe));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto id = stripe_paid_after_cancel(engine, stores, "late", "pi_3LatePaidAfterCancel");
  ASSERT_GT(id, 0);
  stripe.add_intent(stores.id("late"), FakeIntent{"pi_3LatePaidAfterCancel", "succeeded", 5000});
  const auto path = "/api/discrepancies/" + std::to_string(id) + "/refund";

  stripe.set_answer(FakeAnswer::malformed_json);  // Stripe refunds; its answer is lost
  const auto lost = api(engine, "POST", path);
  EXPECT_NE(lost.status, 200) << lost.body;
  EXPECT_TRUE(open_discrepancy(engine, id));
  EXPECT_EQ(stripe.refunds_made(), 1);

  stripe.set_answer(FakeAnswer::honest);
  const auto refunded = api(engine, "POST", path);
  ASSERT_EQ(refunded.status, 200) << refunded.body << engine.log();
  const auto refund = body_of(refunded)["refund"];
  EXPECT_EQ(refund["status"], "succeeded");
  EXPECT_EQ(refund["reason"], "status succeeded");
  const auto refund_no = refund["refundNo"].get<std::string>();
  // Both requests carried the refund number as their Idempotency-Key: one refund at Stripe.
  EXPECT_EQ(stripe.refund_requests(), (std::vector<std::string>{refund_no, refund_no}));
  EXPECT_EQ(stripe.refunds_made(), 1);
  EXPECT_EQ(stripe.refunded_cents(), 5000);
  const auto form = stripe.last_refund_form();
  EXPECT_EQ(form.at("payment_intent"), "pi_3LatePaidAfterCancel");
  EXPECT_EQ(form.at("amount"), "5000");
  EXPECT_EQ(form.at("metadata[refundNo]"), refund_no);
  EXPECT_FALSE(open_discrepancy(engine, id));
  // A third click: SeatFlow answers 409 and Stripe is not asked again.
  EXPECT_EQ(api(engine, "POST", path).status, 409);
  EXPECT_EQ(stripe.refund_requests().size(), 2U);
  EXPECT_EQ(metric_value(engine.metrics(),
                         R"(seatflow_refund_total{channel="stripe",result="succeeded"})"),
            std::optional<double>(1));
  EXPECT_EQ(engine.log().find(kApiKey), std::string::npos) << "the API key is never logged";
}

TEST(StripeApi, AnUnusableApiKeyStopsStartUpWithoutQuotingIt) {
  const auto started = run_to_exit({"serve"}, {{"SEATFLOW_STRIPE_API_KEY", "sk_test with space"}});
  EXPECT_NE(started.exit_code, 0);
  EXPECT_NE(started.output.find("SEATFLOW_STRIPE_API_KEY must be printable ASCII"),
            std::string::npos)
      << started.output;
  EXPECT_EQ(started.output.find("sk_test with space"), std::string::npos);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

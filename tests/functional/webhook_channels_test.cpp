// Functional tests: stripe and Standard Webhooks callbacks end to end over HTTP (SPEC §6, §11),
// the real binary started with both dialects' secrets; every rejection must leave nothing behind.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "channels/standard/standard_channel.hpp"
#include "channels/stripe/stripe_channel.hpp"
#include "support/engine_fixture.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using namespace std::chrono_literals;

const std::string kStripeSecret = "whsec_functional_stripe_secret_51f0";
const std::string kStripeRotated = "whsec_functional_stripe_rotated_8c2e";
const std::string kStandardSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const std::string kStandardRotated = "whsec_ZnVuY3Rpb25hbC1zdGFuZGFyZC1yb3RhdGVk";  // unpadded ok
constexpr const char* kApiToken = "functional-webhook-api-token-61d2";

EnvOverrides webhook_env(const EnvOverrides& extra = {}) {
  EnvOverrides env{{"SEATFLOW_STRIPE_WEBHOOK_SECRETS", kStripeSecret + "," + kStripeRotated},
                   {"SEATFLOW_STANDARD_WEBHOOK_SECRETS", kStandardSecret + "," + kStandardRotated}};
  for (const auto& [name, value] : extra) {
    env[name] = value;
  }
  return env;
}

// The senders' side: the same secrets, so tests sign as Stripe or a Standard Webhooks sender.
const channels::StripeChannel& stripe_signer(const std::string& secret = kStripeSecret) {
  static const channels::StripeChannel first(channels::StripeConfig{{kStripeSecret}});
  static const channels::StripeChannel rotated(channels::StripeConfig{{kStripeRotated}});
  static const channels::StripeChannel foreign(channels::StripeConfig{{"whsec_not_configured"}});
  if (secret == kStripeSecret) {
    return first;
  }
  return secret == kStripeRotated ? rotated : foreign;
}

const channels::StandardChannel& standard_signer(bool rotated = false) {
  static const channels::StandardChannel first(channels::StandardConfig{{kStandardSecret}});
  static const channels::StandardChannel second(channels::StandardConfig{{kStandardRotated}});
  return rotated ? second : first;
}

struct Signed {
  std::string body;
  HeaderList headers;
};

channels::StripeEvent stripe_event(const std::string& id, const std::string& payment,
                                   const std::string& intent, std::int64_t amount = 5000) {
  channels::StripeEvent event;
  event.id = id;
  event.payment_no = payment;
  event.payment_intent_id = intent;
  event.amount = amount;
  event.created_s = domain::unix_time_ms() / 1000;
  return event;
}

Signed stripe_request(const channels::StripeEvent& event,
                      const channels::StripeChannel& signer = stripe_signer(),
                      std::int64_t timestamp_s = domain::unix_time_ms() / 1000) {
  auto body = channels::stripe_event_body(event);
  auto header = channels::stripe_signature_header(signer.keys(), timestamp_s, body);
  // Stripe's own casing: the engine matches header names case-insensitively.
  return {std::move(body), {{"Content-Type", "application/json"}, {"Stripe-Signature", header}}};
}

channels::StandardEvent standard_event(const std::string& payment, const std::string& trade,
                                       std::int64_t amount = 5000,
                                       std::string type = "payment.succeeded") {
  channels::StandardEvent event;
  event.type = std::move(type);
  event.payment_no = payment;
  event.amount_cents = amount;
  event.trade_no = trade;
  event.timestamp_s = domain::unix_time_ms() / 1000;
  return event;
}

Signed standard_request(const std::string& id, const channels::StandardEvent& event,
                        bool rotated = false,
                        std::int64_t timestamp_s = domain::unix_time_ms() / 1000) {
  auto body = channels::standard_event_body(event);
  auto signature =
      channels::standard_signature(standard_signer(rotated).keys(), id, timestamp_s, body);
  return {std::move(body),
          {{"Content-Type", "application/json"},
           {"Webhook-Id", id},
           {"Webhook-Timestamp", std::to_string(timestamp_s)},
           {"Webhook-Signature", signature}}};
}

std::string repeated(std::string_view piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) {
    out += piece;
  }
  return out;
}

Response post(const TestEngine& engine, const std::string& channel, const Signed& request) {
  return engine.connect()->request("POST", "/api/payment/notify/" + channel, request.body,
                                   request.headers);
}

TEST(WebhookChannels, StripeSuccessPaysAcksReceivedAndFoldsItsRetry) {
  Stores stores;
  const Pending p(stores, "stripe");
  TestEngine engine(webhook_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto log = engine.await_log("channels=hmac,stripe,standard");
  EXPECT_NE(log.find("channels=hmac,stripe,standard"), std::string::npos) << log;
  const auto id = stores.id("evt");
  const auto intent = stores.id("pi");
  const auto request = stripe_request(stripe_event(id, p.payment, intent));

  const auto first = post(engine, "stripe", request);
  EXPECT_EQ(first.status, 200) << first.body << first.error;
  EXPECT_EQ(first.body, R"({"received":true})");
  EXPECT_EQ(first.header("content-type"), "application/json");
  expect_paid(stores, p, intent);
  ASSERT_TRUE(stores.log_row(id).has_value());

  // Stripe's retry renews the signature time; the same event is a duplicate, ACKed the same way.
  const auto retry =
      post(engine, "stripe",
           stripe_request(stripe_event(id, p.payment, intent), stripe_signer(kStripeRotated),
                          domain::unix_time_ms() / 1000 - 60));
  EXPECT_EQ(retry.status, 200) << retry.body << retry.error;
  EXPECT_EQ(retry.body, R"({"received":true})");
  EXPECT_EQ(stores.log_rows_for_payment(p.payment), 1);
  EXPECT_EQ(stores.await_duplicate_count(id, 1), 1);
  EXPECT_EQ(engine.callbacks("applied", "stripe"), 1.0);
  expect_paid(stores, p, intent);
}

TEST(WebhookChannels, StandardFailureThenSuccessAcksWithAnEmptyBody) {
  Stores stores;
  const Pending p(stores, "standard");
  TestEngine engine(webhook_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto failed_id = stores.id("msg-failed");
  const auto failed =
      post(engine, "standard",
           standard_request(failed_id, standard_event(p.payment, "", 5000, "payment.failed")));
  EXPECT_EQ(failed.status, 200) << failed.body << failed.error;
  EXPECT_EQ(failed.body, "");
  EXPECT_EQ(stores.payment_status(p.payment), 2);
  EXPECT_EQ(stores.order_status(p.order), 0);

  const auto paid_id = stores.id("msg-paid");
  const auto trade = stores.id("trade");
  const auto paid =
      post(engine, "standard", standard_request(paid_id, standard_event(p.payment, trade), true));
  EXPECT_EQ(paid.status, 200) << paid.body << paid.error;
  EXPECT_EQ(paid.body, "");
  expect_paid(stores, p, trade);
  EXPECT_EQ(stores.log_rows_for_payment(p.payment), 2);
  EXPECT_EQ(engine.callbacks("applied", "standard"), 2.0);
}

TEST(WebhookChannels, EveryRejectionLeavesNothingBehind) {
  Stores stores;
  const Pending stripe(stores, "stripe");
  const Pending standard(stores, "standard");
  const Pending hmac(stores, "hmac");
  TestEngine engine(webhook_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto now_s = domain::unix_time_ms() / 1000;

  struct Case {
    std::string name;
    std::string channel;
    Signed request;
    int status;
    const Pending* pending;
    std::string callback_id;
  };
  std::vector<Case> cases;
  const auto stripe_case = [&](const std::string& name, const std::function<void(Signed&)>& edit,
                               int status, channels::StripeEvent event = {}) {
    if (event.id.empty()) {
      event = stripe_event(stores.id(name), stripe.payment, stores.id("pi-" + name));
    }
    auto request = stripe_request(event);
    edit(request);
    cases.push_back({name, "stripe", std::move(request), status, &stripe, event.id});
  };
  const auto keep = [](Signed&) {};
  stripe_case(
      "forged-body", [](Signed& r) { r.body.insert(r.body.size() - 1, " "); }, 401);
  stripe_case(
      "foreign-secret",
      [&](Signed& r) {
        r.headers[1].second =
            channels::stripe_signature_header(stripe_signer("x").keys(), now_s, r.body);
      },
      401);
  stripe_case(
      "stale",
      [&](Signed& r) {
        r.headers[1].second =
            channels::stripe_signature_header(stripe_signer().keys(), now_s - 301, r.body);
      },
      401);
  stripe_case(
      "v0-only",
      [](Signed& r) {
        auto& h = r.headers[1].second;
        h.replace(h.find(",v1="), 4, ",v0=");
      },
      401);
  stripe_case(
      "thousands-of-entries",
      // Thousands of entries inside the byte bound (and the server's header limit).
      [](Signed& r) { r.headers[1].second += repeated(",a", 1500); }, 400);
  stripe_case(
      "no-header", [](Signed& r) { r.headers.pop_back(); }, 401);
  auto wrong_amount = stripe_event(stores.id("amount"), stripe.payment, stores.id("pi-a"), 4999);
  stripe_case("amount", keep, 400, wrong_amount);
  auto wrong_currency = stripe_event(stores.id("currency"), stripe.payment, stores.id("pi-c"));
  wrong_currency.currency = "usd";
  stripe_case("currency", keep, 400, wrong_currency);
  // The hmac payment paid through the stripe dialect: the payment's channel is hmac (400).
  auto other_channel = stripe_event(stores.id("other-channel"), hmac.payment, stores.id("pi-o"));
  auto other_request = stripe_request(other_channel);
  cases.push_back({"other-channel", "stripe", other_request, 400, &hmac, other_channel.id});
  auto unknown = stripe_event(stores.id("unknown"), stores.id("no-such-payment"), stores.id("pi"));
  cases.push_back({"unknown", "stripe", stripe_request(unknown), 404, &stripe, unknown.id});

  const auto standard_case = [&](const std::string& name, const std::function<void(Signed&)>& edit,
                                 int status, std::int64_t amount = 5000) {
    const auto id = stores.id(name);
    auto request =
        standard_request(id, standard_event(standard.payment, stores.id("t-" + name), amount));
    edit(request);
    cases.push_back({name, "standard", std::move(request), status, &standard, id});
  };
  standard_case(
      "s-forged", [](Signed& r) { r.body.insert(r.body.size() - 1, " "); }, 401);
  standard_case(
      "s-last-char",
      [](Signed& r) {
        // The last character whose bits all count: the one before the '=' also carries two
        // padding bits, which base64 decoders ignore, so 'A' and 'B' there can decode alike.
        auto& sig = r.headers[3].second;
        sig[sig.size() - 3] = sig[sig.size() - 3] == 'A' ? 'B' : 'A';
      },
      401);
  standard_case(
      "s-stale", [&](Signed& r) { r.headers[2].second = std::to_string(now_s + 301); }, 401);
  standard_case(
      "s-no-v1", [](Signed& r) { r.headers[3].second = "v2,abc v1a,def"; }, 401);
  standard_case(
      "s-thousands", [](Signed& r) { r.headers[3].second += repeated(" a", 1500); }, 400);
  standard_case("s-amount", keep, 400, 5001);
  standard_case(
      "s-no-id", [](Signed& r) { r.headers.erase(r.headers.begin() + 1); }, 401);

  for (const auto& c : cases) {
    const auto response = post(engine, c.channel, c.request);
    EXPECT_EQ(response.status, c.status) << c.name << ": " << response.body << response.error;
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    expect_untouched(stores, *c.pending, c.callback_id);
  }
  // The stale case is authentic (its v1 matches): counted apart (SPEC §14). s-stale moved the
  // timestamp after signing, so its v1 no longer matches: a forgery.
  EXPECT_EQ(engine.callbacks("rejected_signature", "stripe"), 4.0);
  EXPECT_EQ(engine.callbacks("stale", "stripe"), 1.0);
  EXPECT_EQ(engine.callbacks("rejected_param", "stripe"), 4.0);
  EXPECT_EQ(engine.callbacks("unknown_payment", "stripe"), 1.0);
  EXPECT_EQ(engine.callbacks("rejected_signature", "standard"), 5.0);
  EXPECT_EQ(engine.callbacks("rejected_param", "standard"), 2.0);
}

TEST(WebhookChannels, SameEventIdWithOtherContentIs409AndChangesNothing) {
  Stores stores;
  const Pending stripe(stores, "stripe");
  const Pending standard(stores, "standard");
  TestEngine engine(webhook_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto id = stores.id("evt");
  const auto intent = stores.id("pi");
  ASSERT_EQ(post(engine, "stripe", stripe_request(stripe_event(id, stripe.payment, intent))).status,
            200);
  auto changed = stripe_event(id, stripe.payment, intent);
  changed.type = "payment_intent.payment_failed";
  const auto conflict = post(engine, "stripe", stripe_request(changed));
  EXPECT_EQ(conflict.status, 409) << conflict.body;
  expect_paid(stores, stripe, intent);
  EXPECT_EQ(engine.callbacks("conflict", "stripe"), 1.0);

  const auto msg = stores.id("msg");
  const auto trade = stores.id("trade");
  ASSERT_EQ(post(engine, "standard", standard_request(msg, standard_event(standard.payment, trade)))
                .status,
            200);
  const auto other_trade = post(
      engine, "standard", standard_request(msg, standard_event(standard.payment, trade + "x")));
  EXPECT_EQ(other_trade.status, 409) << other_trade.body;
  expect_paid(stores, standard, trade);
  EXPECT_EQ(engine.callbacks("conflict", "standard"), 1.0);
}

TEST(WebhookChannels, EventTypesSeatFlowDoesNotHandleAreAcknowledgedAndWriteNothing) {
  Stores stores;
  const Pending stripe(stores, "stripe");
  const Pending standard(stores, "standard");
  TestEngine engine(webhook_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  auto charge = stripe_event(stores.id("evt-charge"), stripe.payment, stores.id("pi"));
  charge.type = "charge.succeeded";
  const auto stripe_answer = post(engine, "stripe", stripe_request(charge));
  EXPECT_EQ(stripe_answer.status, 200) << stripe_answer.body;
  EXPECT_EQ(stripe_answer.body, R"({"received":true})");
  expect_untouched(stores, stripe, charge.id);
  // Still signed: a forged event of an unhandled type is 401.
  auto forged = stripe_request(charge);
  forged.body.insert(forged.body.size() - 1, " ");
  EXPECT_EQ(post(engine, "stripe", forged).status, 401);

  const auto msg = stores.id("msg-refund");
  const auto standard_answer =
      post(engine, "standard",
           standard_request(msg, standard_event(standard.payment, "t", 5000, "payment.refunded")));
  EXPECT_EQ(standard_answer.status, 200) << standard_answer.body;
  expect_untouched(stores, standard, msg);
  EXPECT_EQ(engine.callbacks("ignored", "stripe"), 1.0);
  EXPECT_EQ(engine.callbacks("ignored", "standard"), 1.0);
}

TEST(WebhookChannels, SuccessForACancelledOrderRecordsADiscrepancyAndMovesNothing) {
  Stores stores;
  const auto payment = stores.id("pay-closed");
  const auto order = stores.id("ord-closed");
  const auto show = stores.id("show-closed");
  stores.create_order(order, show, {"C1"}, 5000, 2);
  stores.create_payment(payment, order, "standard", 5000, 3);
  TestEngine engine(webhook_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto response = post(engine, "standard",
                             standard_request(stores.id("msg"), standard_event(payment, "T-late")));
  EXPECT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(stores.payment_status(payment), 3);
  EXPECT_EQ(stores.order_status(order), 2);
  EXPECT_EQ(stores.discrepancies(payment, "paid_after_cancel"), 1);
  EXPECT_EQ(engine.callbacks("discrepancy", "standard"), 1.0);
}

TEST(WebhookChannels, WithoutSecretsBothNotifyPathsAre404) {
  Stores stores;
  const Pending stripe(stores, "stripe");
  const Pending standard(stores, "standard");
  TestEngine engine;
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto event = stripe_event(stores.id("evt"), stripe.payment, stores.id("pi"));
  EXPECT_EQ(post(engine, "stripe", stripe_request(event)).status, 404);
  const auto msg = stores.id("msg");
  EXPECT_EQ(
      post(engine, "standard", standard_request(msg, standard_event(standard.payment, "T"))).status,
      404);
  expect_untouched(stores, stripe, event.id);
  expect_untouched(stores, standard, msg);
}

// The header lines `seatflow sign` prints between the body and the curl line.
HeaderList printed_headers(const std::string& output) {
  HeaderList headers{{"Content-Type", "application/json"}};
  std::size_t start = output.find("\n\n") + 2;
  while (start < output.size() && output[start] != '\n') {
    const auto end = output.find('\n', start);
    const auto line = output.substr(start, end - start);
    const auto colon = line.find(": ");
    if (colon != std::string::npos) {
      headers.emplace_back(line.substr(0, colon), line.substr(colon + 2));
    }
    start = end + 1;
  }
  return headers;
}

TEST(WebhookChannels, SignCommandOutputIsAcceptedByTheEngine) {
  Stores stores;
  const Pending stripe(stores, "stripe");
  const Pending standard(stores, "standard");
  TestEngine engine(webhook_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  for (const auto* p : {&stripe, &standard}) {
    const std::string channel = p == &stripe ? "stripe" : "standard";
    const auto output =
        run_to_exit({"sign", "--channel", channel, "--payment-no", p->payment, "--amount-cents",
                     "5000", "--trade-no", stores.id("trade-" + channel)},
                    webhook_env());
    ASSERT_EQ(output.exit_code, 0) << output.output;
    EXPECT_NE(output.output.find("curl -sS -X POST http://"), std::string::npos) << output.output;
    const Signed request{output.output.substr(0, output.output.find('\n')),
                         printed_headers(output.output)};
    ASSERT_EQ(request.headers.size(), channel == "stripe" ? 2U : 4U) << output.output;
    const auto response = post(engine, channel, request);
    EXPECT_EQ(response.status, 200) << channel << ": " << response.body << output.output;
    expect_paid(stores, *p, stores.id("trade-" + channel));
  }
  const auto missing = run_to_exit({"sign", "--channel", "stripe", "--payment-no", "P"});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("SEATFLOW_STRIPE_WEBHOOK_SECRETS"), std::string::npos);
}

TEST(WebhookChannels, MockGatewaySpeaksStripeAutomatically) {
  Stores stores;
  const auto order = stores.id("ord-mock");
  const auto payment = stores.id("pay-mock");
  const auto show = stores.id("show-mock");
  TestEngine engine(webhook_env({{"SEATFLOW_API_TOKEN", kApiToken},
                                 {"SEATFLOW_MOCK_GATEWAY_CHANNEL", "stripe"},
                                 {"SEATFLOW_MOCK_GATEWAY_DELAY_MS", "200"}}));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const json order_body = {{"orderNo", order},
                           {"userId", "u1"},
                           {"showId", show},
                           {"seatIds", {"M1"}},
                           {"amountCents", 4321}};
  ASSERT_EQ(engine.api("POST", "/api/orders", kApiToken, order_body.dump()).status, 201);
  const json payment_body = {{"orderNo", order}, {"paymentNo", payment}, {"channel", "stripe"}};
  const auto created = engine.api("POST", "/api/payments", kApiToken, payment_body.dump());
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_TRUE(wait_until([&] { return stores.payment_status(payment) == 1; }, 10s)) << engine.log();
  EXPECT_EQ(stores.order_status(order), 1);
  EXPECT_EQ(stores.seat(show, "M1"), "2:" + order);
  EXPECT_EQ(stores.channel_trade_no(payment), "pi_mock_" + payment);
  // The mock gateway's callback is counted as the engine answers it, just after the commit the
  // test saw: a bounded wait, not a race.
  EXPECT_TRUE(wait_until([&] { return engine.callbacks("applied", "stripe") == 1.0; }, 5s))
      << engine.metrics();
  (void)stores.redis().command({"DEL", "seatflow:seats:{" + show + "}"});
}

TEST(WebhookChannels, MockGatewayPaysOnDemandInTheStandardDialect) {
  Stores stores;
  const Pending p(stores, "standard");
  TestEngine engine(webhook_env({{"SEATFLOW_API_TOKEN", kApiToken},
                                 {"SEATFLOW_MOCK_GATEWAY_CHANNEL", "standard"},
                                 {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"}}));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const json pay = {{"paymentNo", p.payment}, {"success", true}};
  const auto response = engine.api("POST", "/api/mock-gateway/pay", kApiToken, pay.dump());
  ASSERT_EQ(response.status, 200) << response.body;
  const auto answer = json::parse(response.body, nullptr, false);
  EXPECT_EQ(answer.value("notifyStatus", 0), 200) << response.body;
  EXPECT_EQ(answer.value("notifyBody", "?"), "") << response.body;
  expect_paid(stores, p, "mock-trade-" + p.payment);
  ASSERT_TRUE(stores.log_row(answer.value("callbackId", "")).has_value()) << response.body;
  const json unknown = {{"paymentNo", stores.id("no-such-payment")}, {"success", true}};
  const auto missing = engine.api("POST", "/api/mock-gateway/pay", kApiToken, unknown.dump());
  EXPECT_EQ(missing.status, 200) << missing.body;
  EXPECT_EQ(json::parse(missing.body, nullptr, false).value("notifyStatus", 0), 404);
}

TEST(WebhookChannels, NoSecretOrSignatureIsEverLogged) {
  Stores stores;
  const Pending stripe(stores, "stripe");
  const Pending standard(stores, "standard");
  TestEngine engine(webhook_env({{"SEATFLOW_LOG_LEVEL", "debug"}}));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  std::vector<std::string> sent;
  const auto good = stripe_request(stripe_event(stores.id("evt"), stripe.payment, stores.id("pi")));
  auto bad = stripe_request(stripe_event(stores.id("evt-b"), stripe.payment, stores.id("pi-b")));
  bad.body.insert(bad.body.size() - 1, " ");
  EXPECT_EQ(post(engine, "stripe", bad).status, 401);
  EXPECT_EQ(post(engine, "stripe", good).status, 200);
  sent.push_back(good.headers[1].second.substr(good.headers[1].second.find("v1=") + 3));
  sent.push_back(bad.headers[1].second.substr(bad.headers[1].second.find("v1=") + 3));
  const auto good_std =
      standard_request(stores.id("msg"), standard_event(standard.payment, stores.id("t")));
  auto bad_std =
      standard_request(stores.id("msg-b"), standard_event(standard.payment, stores.id("t-b")));
  bad_std.body.insert(bad_std.body.size() - 1, " ");
  EXPECT_EQ(post(engine, "standard", bad_std).status, 401);
  EXPECT_EQ(post(engine, "standard", good_std).status, 200);
  sent.push_back(good_std.headers[3].second.substr(3));
  sent.push_back(bad_std.headers[3].second.substr(3));
  std::this_thread::sleep_for(200ms);
  const auto log = engine.log();
  for (const auto& secret : {kStripeSecret, kStripeRotated, kStandardSecret, kStandardRotated}) {
    EXPECT_EQ(log.find(secret), std::string::npos) << "a secret reached the log";
    EXPECT_EQ(log.find(secret.substr(6)), std::string::npos) << "a secret reached the log";
  }
  for (const auto& signature : sent) {
    EXPECT_EQ(log.find(signature.substr(0, 16)), std::string::npos)
        << "a signature reached the log";
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

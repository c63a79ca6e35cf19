// Functional tests of where a notify comes from and what it may spend (SPEC §14): X-Forwarded-For
// sent on several lines is read as one list (a client's own line cannot stand in for the proxy's),
// a trusted proxy's aggregate bucket bounds rotated addresses, an authentic but unusable event
// spends nothing, a target in absolute form is served, and a forwarded header from an untrusted
// peer is named in the log.
#include <gtest/gtest.h>

#include <string>

#include "channels/stripe/stripe_channel.hpp"
#include "support/engine_fixture.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

// A hmac notify whose X-Forwarded-For lines are `forwarded`, one header line each, in order.
Response notify_via(const TestEngine& engine, const std::vector<std::string>& forwarded,
                    const std::string& body) {
  HeaderList headers{{"Content-Type", "application/json"}};
  for (const auto& line : forwarded) {
    headers.emplace_back("X-Forwarded-For", line);
  }
  return engine.request("POST", kHmacNotifyPath, body, headers);
}

std::string forgery(Stores& stores, const std::string& payment, const std::string& name) {
  return signed_body(stores.id(name), payment, 1, domain::unix_time_ms(), "not-the-secret-at-all");
}

TEST(FrontDoorSources, AClientsOwnForwardedForLineCannotPassTheAllowlist) {
  Stores stores;
  Pending pending(stores, "hmac", "-lines");
  // The engine sits behind a proxy on 127.0.0.1 that appends the address it saw on a line of its
  // own (HAProxy's option forwardfor); the gateway's published range is 198.51.100.0/24.
  TestEngine engine(EnvOverrides{{"SEATFLOW_TRUSTED_PROXIES", "127.0.0.1/32"},
                                 {"SEATFLOW_HMAC_ALLOWED_SOURCES", "198.51.100.0/24"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto body = signed_body(stores.id("cb-lines"), pending.payment, 1);
  // The client wrote a gateway's address on its own line; the proxy's line names the client.
  const auto forged = notify_via(engine, {"198.51.100.7", "203.0.113.9"}, body);
  EXPECT_EQ(forged.status, 403) << forged.body;
  expect_untouched(stores, pending, "");
  // The gateway itself, as the proxy saw it, passes.
  const auto genuine = notify_via(engine, {"203.0.113.9", "198.51.100.7"}, body);
  EXPECT_EQ(genuine.status, 200) << genuine.body;
  EXPECT_EQ(stores.payment_status(pending.payment), 1);
}

TEST(FrontDoorSources, ARepeatedForwardedForLineCannotDrainAnotherSourcesBucket) {
  Stores stores;
  Pending pending(stores, "hmac", "-drain");
  TestEngine engine(EnvOverrides{{"SEATFLOW_TRUSTED_PROXIES", "127.0.0.1/32"},
                                 {"SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", "2"},
                                 {"SEATFLOW_UNVERIFIED_TOKENS_PER_S", "1"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const std::string gateway = "198.51.100.20";
  // Forgeries that name the gateway on their own line spend the attacker's bucket, not its.
  for (int i = 0; i < 4; ++i) {
    const auto answer =
        notify_via(engine, {gateway, "203.0.113.66"}, forgery(stores, pending.payment, "d"));
    EXPECT_EQ(answer.status, i < 2 ? 401 : 429) << i;
  }
  const auto applied =
      notify_via(engine, {gateway}, signed_body(stores.id("cb-drain"), pending.payment, 1));
  EXPECT_EQ(applied.status, 200) << applied.body;
  EXPECT_EQ(stores.payment_status(pending.payment), 1);
}

TEST(FrontDoorSources, RotatedAddressesBehindOneProxySpendItsAggregateBucket) {
  Stores stores;
  Pending known(stores, "hmac", "-known");
  Pending later(stores, "hmac", "-later");
  Pending unknown(stores, "hmac", "-unknown");
  TestEngine engine(EnvOverrides{{"SEATFLOW_TRUSTED_PROXIES", "127.0.0.1/32"},
                                 {"SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", "100"},
                                 {"SEATFLOW_UNVERIFIED_PER_PROXY_BURST_TOKENS_MAX", "3"},
                                 {"SEATFLOW_UNVERIFIED_PER_PROXY_TOKENS_PER_S", "1"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  // A gateway's callback verifies through the proxy before the flood.
  const std::string gateway = "198.51.100.30";
  const auto first =
      notify_via(engine, {gateway}, signed_body(stores.id("cb-known"), known.payment, 1));
  ASSERT_EQ(first.status, 200) << first.body;
  // Each forgery names a new address: each source's own bucket is full, the proxy's is not. The
  // proxy's holds 3 tokens and gains one a second, so a 429 comes within a few (every one would
  // be verified, 401, were rotation free).
  int forgeries = 0;
  const auto drain = [&] {
    for (int i = 0; i < 10; ++i) {
      const auto answer =
          notify_via(engine, {"203.0.113." + std::to_string(++forgeries)},
                     forgery(stores, unknown.payment, "rot" + std::to_string(forgeries)));
      if (answer.status == 429) {
        return true;
      }
      EXPECT_EQ(answer.status, 401) << answer.body;
    }
    return false;
  };
  ASSERT_TRUE(drain()) << "rotated addresses were never limited";
  EXPECT_LT(engine.callbacks("rejected_signature"), forgeries) << "the 429 was verified";
  // The gateway that verified lately goes on while the proxy's bucket is empty ...
  const auto gateway_again =
      notify_via(engine, {gateway}, signed_body(stores.id("cb-later"), later.payment, 1));
  EXPECT_EQ(gateway_again.status, 200) << gateway_again.body;
  EXPECT_EQ(stores.payment_status(later.payment), 1);
  // ... and a source never seen verified waits like the rotated ones.
  ASSERT_TRUE(drain());
  const auto stranger =
      notify_via(engine, {"192.0.2.44"}, signed_body(stores.id("cb-unknown"), unknown.payment, 1));
  EXPECT_EQ(stranger.status, 429) << stranger.body;
  expect_untouched(stores, unknown, "");
}

const std::string kStripeSecret = "whsec_front_door_sources_stripe_7d1a";

std::string stripe_header(const std::string& body) {
  static const channels::StripeChannel signer(channels::StripeConfig{{kStripeSecret}});
  return channels::stripe_signature_header(signer.keys(), domain::unix_time_ms() / 1000, body);
}

TEST(FrontDoorSources, AnAuthenticButUnusableEventSpendsNoToken) {
  Stores stores;
  Pending pending(stores, "stripe", "-unusable");
  TestEngine engine(EnvOverrides{{"SEATFLOW_STRIPE_WEBHOOK_SECRETS", kStripeSecret},
                                 {"SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", "3"},
                                 {"SEATFLOW_UNVERIFIED_TOKENS_PER_S", "1"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  channels::StripeEvent event;
  event.payment_no = pending.payment;
  event.payment_intent_id = "pi_" + stores.id("unusable");
  event.amount = 5000;
  event.created_s = domain::unix_time_ms() / 1000;
  event.currency = "usd";  // the engine takes cny: signed by Stripe, but not usable here
  for (int i = 0; i < 6; ++i) {
    event.id = "evt_" + stores.id("usd" + std::to_string(i));
    const auto body = channels::stripe_event_body(event);
    const auto answer = engine.request(
        "POST", "/api/payment/notify/stripe", body,
        {{"Content-Type", "application/json"}, {"Stripe-Signature", stripe_header(body)}});
    EXPECT_EQ(answer.status, 400) << i << ": " << answer.body;
  }
  event.currency = "cny";
  event.id = "evt_" + stores.id("cny");
  const auto body = channels::stripe_event_body(event);
  const auto applied = engine.request(
      "POST", "/api/payment/notify/stripe", body,
      {{"Content-Type", "application/json"}, {"Stripe-Signature", stripe_header(body)}});
  EXPECT_EQ(applied.status, 200) << applied.body;
  EXPECT_EQ(stores.payment_status(pending.payment), 1);
  EXPECT_EQ(metric_value(engine.metrics(), R"(seatflow_http_rate_limited_total{channel="stripe"})")
                .value_or(-1),
            0.0);
}

// Opens `count` connections from `source` that send nothing.
std::vector<std::unique_ptr<HttpClient>> silent_from(const TestEngine& engine,
                                                     const std::string& source, int count) {
  std::vector<std::unique_ptr<HttpClient>> silent;
  for (int i = 0; i < count; ++i) {
    silent.push_back(engine.connect_from(source));
  }
  return silent;
}

TEST(FrontDoorSources, AFullTableClosesAHeldConnectionBeforeItRefusesANewOne) {
  Stores stores;
  Pending pending(stores, "hmac", "-held-slot");
  TestEngine engine(EnvOverrides{{"SEATFLOW_CONNECTIONS_MAX", "4"},
                                 {"SEATFLOW_CONNECTIONS_PER_SOURCE_MAX", "3"},
                                 {"SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", "1"},
                                 {"SEATFLOW_UNVERIFIED_TOKENS_PER_S", "1"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  // The flooder (127.0.0.3) spends its one token, is refused once at once, then its next 429 is
  // held (1 s): its third connection waits with a request the engine will not answer for now.
  std::vector<std::unique_ptr<HttpClient>> flooder;
  for (int i = 0; i < 3; ++i) {
    flooder.push_back(engine.connect_from("127.0.0.3"));
  }
  const auto forged_body = forgery(stores, pending.payment, "held-slot");
  const HeaderList json{{"Content-Type", "application/json"}};
  EXPECT_EQ(flooder[0]->request("POST", kHmacNotifyPath, forged_body, json).status, 401);
  EXPECT_EQ(flooder[1]->request("POST", kHmacNotifyPath, forged_body, json).status, 429);
  ASSERT_TRUE(flooder[2]->send_raw("POST " + std::string(kHmacNotifyPath) +
                                   " HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                                   "Content-Length: " +
                                   std::to_string(forged_body.size()) + "\r\n\r\n" + forged_body));
  // A fourth connection, from elsewhere, that has sent something and waits for its answer.
  auto busy = engine.connect_from("127.0.0.4");
  ASSERT_EQ(busy->get("/healthz").status, 200);
  // The third 429 is being held once it is counted (its hold, 1 s, starts then).
  ASSERT_TRUE(wait_until(
      [&] {
        const auto metrics = busy->get("/metrics");
        return metric_value(metrics.body, R"(seatflow_http_rate_limited_total{channel="hmac"})")
                   .value_or(0) >= 2.0;
      },
      std::chrono::seconds(5)));
  // The table is full (4). A gateway's connection is served: the held one made room, unanswered.
  const auto gateway = engine.connect_from("127.0.0.2");
  const auto applied = gateway->request(
      "POST", kHmacNotifyPath, signed_body(stores.id("cb-held-slot"), pending.payment, 1), json);
  EXPECT_EQ(applied.status, 200) << applied.body << applied.error;
  EXPECT_EQ(stores.payment_status(pending.payment), 1);
  EXPECT_TRUE(flooder[2]->is_closed_by_peer(3'000));
  EXPECT_TRUE(flooder[2]->buffered().empty())
      << "the held 429 was written: " << flooder[2]->buffered();
  EXPECT_EQ(busy->get("/healthz").status, 200) << "a connection in use was closed for room";
}

TEST(FrontDoorSources, AFullTableOfSilentConnectionsStillTakesAGatewaysConnection) {
  TestEngine engine(EnvOverrides{{"SEATFLOW_CONNECTIONS_MAX", "4"},
                                 {"SEATFLOW_CONNECTIONS_PER_SOURCE_MAX", "2"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  // Two sources fill the table with connections that never send a byte (the header timeout,
  // 10 s, would close them only later).
  auto first = silent_from(engine, "127.0.0.5", 2);
  auto second = silent_from(engine, "127.0.0.6", 2);
  const auto health = engine.get("/healthz");
  EXPECT_EQ(health.status, 200) << health.body << health.error;
  int closed = 0;
  for (auto* group : {&first, &second}) {
    for (auto& client : *group) {
      closed += client->is_closed_by_peer(200) ? 1 : 0;
    }
  }
  EXPECT_GE(closed, 1) << "no silent connection made room";
  // A source over its own cap is still refused: its silent connections count against it.
  auto third = silent_from(engine, "127.0.0.7", 2);
  auto capped = engine.connect_from("127.0.0.7");
  const auto refused = capped->read_response(3'000);
  EXPECT_EQ(refused.status, 503) << refused.error;
}

TEST(FrontDoorSources, ATargetInAbsoluteFormIsServed) {
  TestEngine engine;
  ASSERT_TRUE(engine.healthy()) << engine.log();
  auto client = engine.connect();
  const std::string authority = "127.0.0.1:" + std::to_string(engine.port());
  ASSERT_TRUE(client->send_raw("GET http://" + authority +
                               "/healthz HTTP/1.1\r\nHost: " + authority + "\r\n\r\n"));
  const auto health = client->read_response(3'000);
  EXPECT_EQ(health.status, 200) << health.body << health.error;
  EXPECT_EQ(health.body, "ok");
}

TEST(FrontDoorSources, AForwardedHeaderFromAnUntrustedPeerIsNamedOnceInTheLog) {
  TestEngine engine;
  ASSERT_TRUE(engine.healthy()) << engine.log();
  EXPECT_EQ(engine.log().find("event=forwarded_header_untrusted"), std::string::npos);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(engine.request("GET", "/healthz", "", {{"X-Forwarded-For", "203.0.113.5"}}).status,
              200);
  }
  const auto log = engine.await_log("event=forwarded_header_untrusted");
  const auto first = log.find("event=forwarded_header_untrusted");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_NE(log.find("peer=127.0.0.1", first), std::string::npos) << log;
  EXPECT_NE(log.find("trusted_proxies=none", first), std::string::npos) << log;
  EXPECT_EQ(log.find("event=forwarded_header_untrusted", first + 1), std::string::npos)
      << "warned more than once: " << log;
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

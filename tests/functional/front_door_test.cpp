// Functional tests of the front door under hostile traffic (SPEC §14): connections that never send
// a byte, too many connections from one source, unverified notify floods (per-source token
// buckets, X-Forwarded-For from trusted proxies only) and per-channel source allowlists. Each
// hostile request is answered and leaves the payment as it was.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/engine_fixture.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

// Connections held open until the cap is reached with each of them answered once (the fixture's
// own health probes may take a moment to be torn down server-side).
std::vector<std::unique_ptr<HttpClient>> hold(const TestEngine& engine, int count) {
  std::vector<std::unique_ptr<HttpClient>> held;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < deadline) {
    held.clear();
    bool all = true;
    for (int i = 0; i < count && all; ++i) {
      held.push_back(engine.connect());
      all = held.back()->get("/healthz").status == 200;
    }
    if (all) {
      return held;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << count << " connections were not all accepted";
  return held;
}

TEST(FrontDoor, ConnectionsThatSendNothingAreClosedAtTheHeaderTimeout) {
  Stores stores;
  TestEngine engine(
      EnvOverrides{{"SEATFLOW_HEADER_TIMEOUT_MS", "300"}, {"SEATFLOW_CONNECTIONS_MAX", "6"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  // A keep-alive connection that was answered waits for the idle timeout (60 s), not this one.
  auto answered = engine.connect();
  ASSERT_EQ(answered->get("/healthz").status, 200);
  // Five sockets that never send a byte fill every other slot.
  std::vector<std::unique_ptr<HttpClient>> silent;
  for (int i = 0; i < 5; ++i) {
    silent.push_back(engine.connect());
    ASSERT_TRUE(silent.back()->connected());
  }
  for (auto& client : silent) {
    EXPECT_TRUE(client->is_closed_by_peer(3'000)) << "a silent connection outlived the deadline";
    EXPECT_TRUE(client->buffered().empty()) << "closed without an answer: " << client->buffered();
  }
  // Their slots are free again, and the answered connection is still open.
  const auto health = engine.get("/healthz");
  EXPECT_EQ(health.status, 200) << health.error;
  EXPECT_EQ(answered->get("/healthz").status, 200);
}

TEST(FrontDoor, ConnectionsOverTheSourceCapAre503AndWriteNothing) {
  Stores stores;
  Pending pending(stores, "hmac", "-cap");
  TestEngine engine(EnvOverrides{{"SEATFLOW_CONNECTIONS_PER_SOURCE_MAX", "3"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  auto held = hold(engine, 3);
  ASSERT_EQ(held.size(), 3U);

  auto excess = engine.connect();
  const auto refused = excess->read_response(3'000);  // answered at once, before any request
  EXPECT_EQ(refused.status, 503) << refused.error;
  EXPECT_EQ(refused.header("retry-after"), "1");
  EXPECT_TRUE(excess->is_closed_by_peer(2'000));
  (void)excess->send_raw("POST " + std::string(kHmacNotifyPath) + " HTTP/1.1\r\nHost: t\r\n\r\n");
  expect_untouched(stores, pending, "");

  // The held connections still work; one closed gives its place back.
  const auto metrics = held.front()->get("/metrics");
  EXPECT_GE(metric_value(metrics.body, "seatflow_connections_refused_total").value_or(0), 1.0);
  held.back().reset();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  Response applied;
  while (std::chrono::steady_clock::now() < deadline) {
    applied = engine.notify(signed_body(stores.id("cb-cap"), pending.payment, 1));
    if (applied.status != 503) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(applied.status, 200) << applied.body << applied.error;
  EXPECT_EQ(stores.payment_status(pending.payment), 1);
}

// A notify for `body` whose X-Forwarded-For is `forwarded` (none when empty).
Response notify_from(const TestEngine& engine, const std::string& forwarded,
                     const std::string& body) {
  HeaderList headers{{"Content-Type", "application/json"}};
  if (!forwarded.empty()) {
    headers.emplace_back("X-Forwarded-For", forwarded);
  }
  return engine.request("POST", kHmacNotifyPath, body, headers);
}

std::string forged(Stores& stores, const std::string& payment, const std::string& name) {
  return signed_body(stores.id(name), payment, 1, domain::unix_time_ms(), "not-the-secret-at-all");
}

double rate_limited(const TestEngine& engine) {
  return metric_value(engine.metrics(), R"(seatflow_http_rate_limited_total{channel="hmac"})")
      .value_or(-1);
}

TEST(FrontDoor, AnUnverifiedFloodIsLimitedPerSourceBeforeParsingAndOtherSourcesAreNot) {
  Stores stores;
  Pending flooded(stores, "hmac", "-flooded");
  Pending other(stores, "hmac", "-other");
  TestEngine engine(EnvOverrides{{"SEATFLOW_TRUSTED_PROXIES", "127.0.0.1/32"},
                                 {"SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", "3"},
                                 {"SEATFLOW_UNVERIFIED_TOKENS_PER_S", "1"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const std::string flood = "203.0.113.7";
  // The burst of forgeries is verified (401); then the source's bucket is empty.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(
        notify_from(engine, flood, forged(stores, flooded.payment, "f" + std::to_string(i))).status,
        401)
        << i;
  }
  const auto limited = notify_from(engine, flood, forged(stores, flooded.payment, "f3"));
  EXPECT_EQ(limited.status, 429) << limited.body;
  EXPECT_EQ(limited.header("retry-after"), "1");
  EXPECT_EQ(engine.callbacks("rejected_signature"), 3.0) << "a 429 is not verified";
  // While it is empty even a valid callback of that source waits (429, nothing written), and a
  // client-written X-Forwarded-For entry left of the proxy's does not hide the source.
  const auto valid_body = signed_body(stores.id("cb-flooded"), flooded.payment, 1);
  EXPECT_EQ(notify_from(engine, flood, valid_body).status, 429);
  EXPECT_EQ(notify_from(engine, "198.51.100.1, " + flood, valid_body).status, 429);
  expect_untouched(stores, flooded, "");
  EXPECT_EQ(rate_limited(engine), 3.0);

  // Parse failures spend a bucket too: malformed bodies from a second source.
  const std::string garbler = "2001:db8::66";
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(notify_from(engine, garbler, "{not json").status, 400) << i;
  }
  EXPECT_EQ(notify_from(engine, garbler, "{not json").status, 429);

  // A valid callback of another source is applied.
  const auto applied =
      notify_from(engine, "198.51.100.1", signed_body(stores.id("cb-other"), other.payment, 1));
  EXPECT_EQ(applied.status, 200) << applied.body;
  EXPECT_EQ(stores.payment_status(other.payment), 1);

  // A token returns at the rate (1/s): the flooded source's valid callback is then applied.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  Response retried;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    retried = notify_from(engine, flood, valid_body);
  } while (retried.status == 429 && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(retried.status, 200) << retried.body;
  EXPECT_EQ(stores.payment_status(flooded.payment), 1);
}

TEST(FrontDoor, ASourceThatKeepsSendingWhileRefusedHasIts429sHeld) {
  Stores stores;
  Pending flooded(stores, "hmac", "-held");
  Pending other(stores, "hmac", "-unheld");
  TestEngine engine(EnvOverrides{{"SEATFLOW_TRUSTED_PROXIES", "127.0.0.1/32"},
                                 {"SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", "2"},
                                 {"SEATFLOW_UNVERIFIED_TOKENS_PER_S", "1"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const std::string flood = "203.0.113.77";
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(
        notify_from(engine, flood, forged(stores, flooded.payment, "h" + std::to_string(i))).status,
        401);
  }
  // A burst of refusals is answered at once; the one after it (the source ignores Retry-After)
  // waits its Retry-After (1 s) before it is written.
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(notify_from(engine, flood, forged(stores, flooded.payment, "r")).status, 429);
  }
  const auto started = std::chrono::steady_clock::now();
  const auto held = notify_from(engine, flood, forged(stores, flooded.payment, "held"));
  const auto waited = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(held.status, 429) << held.body << held.error;
  EXPECT_EQ(held.header("retry-after"), "1");
  EXPECT_GE(waited, std::chrono::milliseconds(900)) << "the flooding source's 429 was not held";
  // Another source is not held, and its valid callback is applied.
  const auto applied =
      notify_from(engine, "198.51.100.77", signed_body(stores.id("cb-unheld"), other.payment, 1));
  EXPECT_EQ(applied.status, 200) << applied.body;
  EXPECT_EQ(stores.payment_status(other.payment), 1);
  expect_untouched(stores, flooded, "");
}

TEST(FrontDoor, ForwardedForIsIgnoredUnlessThePeerIsATrustedProxy) {
  Stores stores;
  Pending pending(stores, "hmac", "-direct");
  TestEngine engine(EnvOverrides{{"SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", "2"},
                                 {"SEATFLOW_UNVERIFIED_TOKENS_PER_S", "1"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  // Forgeries claiming to come from elsewhere spend the peer's own bucket (127.0.0.1) ...
  EXPECT_EQ(notify_from(engine, "203.0.113.9", forged(stores, pending.payment, "a")).status, 401);
  EXPECT_EQ(notify_from(engine, "203.0.113.10", forged(stores, pending.payment, "b")).status, 401);
  // ... so the peer is limited whatever it writes in the header.
  const auto limited =
      notify_from(engine, "198.51.100.2", signed_body(stores.id("cb-direct"), pending.payment, 1));
  EXPECT_EQ(limited.status, 429) << limited.body;
  expect_untouched(stores, pending, "");
}

TEST(FrontDoor, AChannelAllowlistRefusesOtherSources403Unparsed) {
  Stores stores;
  Pending outside(stores, "hmac", "-outside");
  Pending inside(stores, "hmac", "-inside");
  TestEngine engine(EnvOverrides{{"SEATFLOW_TRUSTED_PROXIES", "127.0.0.1/32"},
                                 {"SEATFLOW_HMAC_ALLOWED_SOURCES", "203.0.113.0/24, 2001:db8::/32"},
                                 {"SEATFLOW_STRIPE_ALLOWED_SOURCES", "192.0.2.1"},
                                 {"SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX", "1"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto valid = signed_body(stores.id("cb-outside"), outside.payment, 1);
  for (const std::string source : {"198.51.100.3", "", "2001:db9::1"}) {
    const auto refused = notify_from(engine, source, valid);
    EXPECT_EQ(refused.status, 403) << source << ": " << refused.body;
  }
  // A 403 is not verified and spends no token: the same source is refused 403 again, not 429.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(notify_from(engine, "198.51.100.3", forged(stores, outside.payment, "x")).status,
              403);
  }
  expect_untouched(stores, outside, "");
  EXPECT_EQ(engine.callbacks("rejected_signature") + engine.callbacks("rejected_param"), 0.0);
  EXPECT_EQ(metric_value(engine.metrics(), R"(seatflow_http_source_refused_total{channel="hmac"})"),
            6.0);
  EXPECT_EQ(rate_limited(engine), 0.0);

  for (const std::string source : {"203.0.113.200", "2001:db8::5"}) {
    const auto applied = notify_from(
        engine, source, signed_body(stores.id("cb-inside-" + source), inside.payment, 1));
    EXPECT_EQ(applied.status, 200) << source << ": " << applied.body;
  }
  EXPECT_EQ(stores.payment_status(inside.payment), 1);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

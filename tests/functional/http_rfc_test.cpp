// Functional tests of HTTP/1.1 as RFC 9110/9112 say (SPEC §14): Host exactly once, HEAD on every
// GET route, 405 with Allow, 401 with WWW-Authenticate on the API, 408 for a request cut by its
// read deadline, and obs-fold refused. Each hostile request leaves the payment as it was.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "support/engine_fixture.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

constexpr const char* kToken = "functional-api-token-rfc-5d1c0e9a7b";

// A notify request for `body` with `headers` (each line ending in CRLF) and no Host of its own.
std::string notify_without_host(const std::string& body, const std::string& headers = {},
                                const std::string& version = "HTTP/1.1") {
  return "POST /api/payment/notify/hmac " + version +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n" + headers + "\r\n" + body;
}

struct Answer {
  Response response;
  bool closed = false;
};

Answer send(const TestEngine& engine, const std::string& raw) {
  auto client = engine.connect();
  Answer answer;
  if (!client->send_raw(raw)) {
    answer.response.error = "send failed";
    return answer;
  }
  answer.response = client->read_response();
  answer.closed = client->is_closed_by_peer(2'000);
  return answer;
}

void expect_400(const TestEngine& engine, const std::string& raw, const std::string& why) {
  const auto answer = send(engine, raw);
  EXPECT_EQ(answer.response.status, 400) << why << ": " << answer.response.error;
  EXPECT_NE(answer.response.body.find(why), std::string::npos) << answer.response.body;
  EXPECT_TRUE(answer.closed) << why;
}

TEST(HttpRfc, HostMissingRepeatedOrInvalidIs400AndNothingIsWritten) {
  Stores stores;
  Pending pending(stores, "hmac");
  TestEngine engine;
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto body = signed_body(stores.id("cb"), pending.payment, 1);
  expect_400(engine, notify_without_host(body), "missing Host header");
  expect_400(engine, notify_without_host(body, {}, "HTTP/1.0"), "missing Host header");
  expect_400(engine, notify_without_host(body, "Host: a\r\nHost: b\r\n"), "repeated host header");
  expect_400(engine, notify_without_host(body, "Host: user@evil\r\n"), "invalid Host header");
  expect_untouched(stores, pending, "");
  EXPECT_EQ(engine.callbacks("applied") + engine.callbacks("rejected_param"), 0.0);

  // The same callback with one Host is applied.
  const auto applied = send(engine, notify_without_host(body, "Host: engine\r\n"));
  EXPECT_EQ(applied.response.status, 200) << applied.response.body;
  EXPECT_EQ(stores.payment_status(pending.payment), 1);
}

// The raw reply to a HEAD request sent with Connection: close (a HEAD reply's Content-Length
// describes a body that is not sent, so the reply is read up to the close).
std::string head_reply(const TestEngine& engine, const std::string& target,
                       const std::string& extra = {}) {
  auto client = engine.connect();
  EXPECT_TRUE(client->send_raw("HEAD " + target + " HTTP/1.1\r\nHost: t\r\n" + extra +
                               "Connection: close\r\n\r\n"));
  EXPECT_TRUE(client->is_closed_by_peer(3'000)) << target;
  return client->buffered();
}

// `raw` is a complete reply with `status`, a Content-Length of `length` and nothing after the
// blank line.
void expect_head(const std::string& raw, const std::string& status, std::size_t length) {
  EXPECT_TRUE(raw.starts_with("HTTP/1.1 " + status)) << raw;
  EXPECT_NE(raw.find("Content-Length: " + std::to_string(length) + "\r\n"), std::string::npos)
      << raw;
  EXPECT_TRUE(raw.ends_with("\r\n\r\n")) << "a reply to HEAD carries no body: " << raw;
}

TEST(HttpRfc, HeadIsAnsweredOnEveryGetRouteWithoutABody) {
  Stores stores;
  Pending pending(stores, "hmac");
  TestEngine engine(EnvOverrides{{"SEATFLOW_API_TOKEN", kToken}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  expect_head(head_reply(engine, "/healthz"), "200", engine.get("/healthz").body.size());
  expect_head(head_reply(engine, "/readyz"), "200", engine.get("/readyz").body.size());
  const auto payment_target = "/api/payments/" + pending.payment;
  const auto get = engine.api("GET", payment_target, kToken);
  ASSERT_EQ(get.status, 200) << get.body;
  expect_head(
      head_reply(engine, payment_target, std::string("Authorization: Bearer ") + kToken + "\r\n"),
      "200", get.body.size());
  expect_head(head_reply(engine, "/console"), "200", engine.get("/console").body.size());
  // HEAD on a POST-only route is a 405, still without a body.
  const auto notify_head = head_reply(engine, kHmacNotifyPath);
  EXPECT_TRUE(notify_head.starts_with("HTTP/1.1 405")) << notify_head;
  EXPECT_NE(notify_head.find("Allow: POST\r\n"), std::string::npos) << notify_head;
  EXPECT_TRUE(notify_head.ends_with("\r\n\r\n")) << notify_head;
  expect_untouched(stores, pending, "");
}

TEST(HttpRfc, WrongMethodIs405WithAllowAndA401NamesTheBearerScheme) {
  Stores stores;
  Pending pending(stores, "hmac");
  TestEngine engine(EnvOverrides{{"SEATFLOW_API_TOKEN", kToken}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto expect_405 = [&](const Response& response, const std::string& allow) {
    EXPECT_EQ(response.status, 405) << response.body;
    EXPECT_EQ(response.header("allow"), allow);
    EXPECT_EQ(response.body.find("not found"), std::string::npos) << response.body;
  };
  expect_405(engine.request("POST", "/healthz"), "GET, HEAD");
  expect_405(engine.request("DELETE", "/metrics"), "GET, HEAD");
  expect_405(engine.request("POST", "/console"), "GET, HEAD");
  expect_405(engine.get(kHmacNotifyPath), "POST");
  expect_405(
      engine.request("PUT", kHmacNotifyPath, signed_body(stores.id("cb"), pending.payment, 1),
                     {{"Content-Type", "application/json"}}),
      "POST");
  expect_405(engine.api("GET", "/api/orders", kToken), "POST");
  expect_405(engine.api("DELETE", "/api/payments/" + pending.payment, kToken), "GET, HEAD");
  expect_405(engine.api("GET", "/api/callbacks/x/replay", kToken), "POST");
  EXPECT_EQ(engine.api("GET", "/api/nothing-here", kToken).status, 404);

  const auto missing = engine.api("GET", "/api/payments/" + pending.payment, "");
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(missing.header("www-authenticate"), "Bearer");
  const auto wrong = engine.api("GET", "/api/payments/" + pending.payment, "not-the-token");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(wrong.header("www-authenticate"), R"(Bearer error="invalid_token")");
  expect_untouched(stores, pending, "");
}

TEST(HttpRfc, ARequestCutByItsReadDeadlineIs408ThenClosed) {
  Stores stores;
  Pending pending(stores, "hmac");
  TestEngine engine(EnvOverrides{{"SEATFLOW_READ_TIMEOUT_MS", "300"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto body = signed_body(stores.id("cb"), pending.payment, 1);
  // Headers cut short, and a signed body cut one byte short of its Content-Length.
  const auto whole = notify_without_host(body, "Host: t\r\n");
  for (const auto& cut :
       {whole.substr(0, whole.find("Content-Length")), whole.substr(0, whole.size() - 1)}) {
    auto client = engine.connect();
    ASSERT_TRUE(client->send_raw(cut));
    const auto response = client->read_response(3'000);
    EXPECT_EQ(response.status, 408) << response.error;
    EXPECT_EQ(response.header("connection"), "close");
    EXPECT_TRUE(client->is_closed_by_peer(2'000));
  }
  expect_untouched(stores, pending, "");
  // A request that arrives whole within the deadline is served.
  const auto served = send(engine, notify_without_host(body, "Host: t\r\n"));
  EXPECT_EQ(served.response.status, 200) << served.response.body;
}

TEST(HttpRfc, ObsFoldInAnyHeaderIs400AndNothingIsParsed) {
  Stores stores;
  Pending pending(stores, "hmac");
  TestEngine engine;
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto body = signed_body(stores.id("cb"), pending.payment, 1);
  const std::string why = "obs-fold";
  // A folded Transfer-Encoding (a proxy may read it as chunked), a folded ordinary header, a tab
  // fold, and whitespace between the request line and the first header.
  expect_400(engine,
             notify_without_host(body, "Host: t\r\nTransfer-Encoding: identity\r\n chunked\r\n"),
             why);
  expect_400(engine, notify_without_host(body, "Host: t\r\nX-Note: a\r\n b\r\n"), why);
  expect_400(engine, notify_without_host(body, "Host: t\r\nX-Note: a\r\n\tb\r\n"), why);
  expect_400(engine,
             "POST /api/payment/notify/hmac HTTP/1.1\r\n X-Pad: 1\r\nHost: t\r\nContent-Length: " +
                 std::to_string(body.size()) + "\r\n\r\n" + body,
             why);
  // The fold's first byte arriving in a read of its own, after the request line was parsed.
  auto client = engine.connect();
  ASSERT_TRUE(client->send_raw("POST /api/payment/notify/hmac HTTP/1.1\r\nHost: t\r\n"));
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ASSERT_TRUE(client->send_raw(" folded\r\nContent-Length: " + std::to_string(body.size()) +
                               "\r\n\r\n" + body));
  const auto trickled = client->read_response(3'000);
  EXPECT_EQ(trickled.status, 400) << trickled.error;
  EXPECT_NE(trickled.body.find(why), std::string::npos) << trickled.body;
  expect_untouched(stores, pending, "");
  EXPECT_EQ(engine.callbacks("applied") + engine.callbacks("rejected_param") +
                engine.callbacks("rejected_signature"),
            0.0);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

// Functional tests of request framing and header rules at the HTTP front: a Transfer-Encoding
// that does not end with chunked, any Transfer-Encoding in HTTP/1.0, and repeated credential or
// signature headers are answered 400 and the connection is closed.
#include <gtest/gtest.h>

#include <string>

#include "support/engine_fixture.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

// Sends `raw` on a fresh connection; the response, and whether the engine closed afterwards.
struct RawResult {
  Response response;
  bool closed = false;
};

RawResult send_raw(const TestEngine& engine, const std::string& raw) {
  auto client = engine.connect();
  RawResult result;
  if (!client->send_raw(raw)) {
    result.response.error = "send failed";
    return result;
  }
  result.response = client->read_response();
  result.closed = client->is_closed_by_peer(2'000);
  return result;
}

// `raw` must be answered 400 with `why` in the body, and the connection closed.
void expect_refused(const TestEngine& engine, const std::string& raw, const std::string& why) {
  const auto result = send_raw(engine, raw);
  EXPECT_EQ(result.response.status, 400) << why << ": " << result.response.error;
  EXPECT_NE(result.response.body.find(why), std::string::npos) << result.response.body;
  EXPECT_TRUE(result.closed) << why;
}

TEST(HttpFraming, TransferEncodingNotEndingWithChunkedOrInHttp10Is400AndCloses) {
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  expect_refused(engine,
                 "POST /api/payment/notify/hmac HTTP/1.1\r\nHost: x\r\n"
                 "Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
                 "Transfer-Encoding must end with chunked");
  expect_refused(engine,
                 "POST /api/payment/notify/hmac HTTP/1.0\r\nHost: x\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                 "Transfer-Encoding in HTTP/1.0");
}

TEST(HttpFraming, ChunkedHttp11IsStillServed) {
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  auto client = engine.connect();
  ASSERT_TRUE(
      client->send_raw("GET /healthz HTTP/1.1\r\nHost: x\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"));
  const auto response = client->read_response();
  EXPECT_EQ(response.status, 200) << response.error;
}

TEST(HttpFraming, RepeatedCredentialAndSignatureHeadersAre400) {
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  for (const std::string header :
       {"Authorization", "Stripe-Signature", "Wechatpay-Signature", "Webhook-Id"}) {
    expect_refused(
        engine,
        "GET /healthz HTTP/1.1\r\nHost: x\r\n" + header + ": a\r\n" + header + ": b\r\n\r\n",
        "repeated");
  }
  // Other headers may repeat.
  auto client = engine.connect();
  ASSERT_TRUE(
      client->send_raw("GET /healthz HTTP/1.1\r\nHost: x\r\nAccept: a\r\nAccept: b\r\n\r\n"));
  EXPECT_EQ(client->read_response().status, 200);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

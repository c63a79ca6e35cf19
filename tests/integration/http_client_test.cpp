// The outbound client against real loopback servers: plain and TLS (a CA made at test time, and
// the system store, which must refuse it), the total deadline against a server that stalls, the
// response size bound, a refused connection.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "net/http_client.hpp"
#include "support/test_http_server.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::ServerRequest;
using testing::ServerResponse;
using testing::TestHttpServer;

net::Request get(const std::string& url) {
  net::Request request;
  request.url = net::parse_url(url).value();
  return request;
}

// Why an exchange brought no answer ("" for one that did), for a failed expectation's message.
std::string why(const domain::Result<net::Response>& response) {
  return response.ok() ? std::string() : response.detail();
}

TEST(HttpClient, PlainRequestCarriesHeadersAndBodyAndReadsTheAnswer) {
  ServerRequest seen;
  TestHttpServer server(
      [&](const ServerRequest& r) {
        seen = r;
        return ServerResponse{201, {{"X-Answer", "yes"}}, "created", 0};
      },
      false);
  net::HttpClient client({}, "");
  auto request = get(server.base_url() + "/path/x?y=1");
  request.method = "POST";
  request.headers = {{"Authorization", "Bearer t"}};
  request.body = "{\"a\":1}";
  const auto sent = client.send(request);
  ASSERT_TRUE(sent.ok()) << why(sent);
  const auto& response = sent.value();
  EXPECT_EQ(response.status, 201);
  EXPECT_EQ(response.body, "created");
  ASSERT_NE(response.header("x-answer"), nullptr);
  EXPECT_EQ(*response.header("x-answer"), "yes");
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.target, "/path/x?y=1");
  EXPECT_EQ(seen.header("authorization"), "Bearer t");
  EXPECT_EQ(seen.header("host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(seen.body, "{\"a\":1}");
}

TEST(HttpClient, HttpsIsVerifiedAgainstTheConfiguredCaAndRefusedByTheSystemStore) {
  TestHttpServer server(
      [](const ServerRequest&) {
        return ServerResponse{200, {}, "tls ok", 0};
      },
      true);
  net::HttpClient trusting({}, testing::make_test_ca().ca_pem_path);
  const auto ok = trusting.send(get(server.base_url() + "/"));
  ASSERT_TRUE(ok.ok()) << why(ok);
  EXPECT_EQ(ok.value().status, 200);
  EXPECT_EQ(ok.value().body, "tls ok");
  net::HttpClient system_store({}, "");
  const auto refused = system_store.send(get(server.base_url() + "/"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), net::errc::unreachable);
  EXPECT_NE(refused.detail().find("TLS handshake failed"), std::string::npos) << refused.detail();
}

TEST(HttpClient, AServerThatStallsIsCutAtTheTotalDeadline) {
  TestHttpServer server(
      [](const ServerRequest&) {
        return ServerResponse{200, {}, "late", 3000};
      },
      false);
  net::HttpClient client({500, 800, 64 * 1024}, "");
  const auto start = std::chrono::steady_clock::now();
  const auto response = client.send(get(server.base_url() + "/"));
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error(), net::errc::timed_out) << response.detail();
  // The call returned at its deadline, not when the server answered 3 s later.
  EXPECT_LT(waited, std::chrono::milliseconds(2500));
}

// A cancel flag set while the server holds its answer ends the call then, over HTTP and HTTPS; a
// flag that stays false changes nothing.
TEST(HttpClient, ACancelledExchangeEndsBeforeTheAnswer) {
  for (const bool tls : {false, true}) {
    TestHttpServer server(
        [](const ServerRequest&) {
          return ServerResponse{200, {}, "late", 3000};
        },
        tls);
    net::HttpClient client({2000, 30'000, 64 * 1024}, testing::make_test_ca().ca_pem_path);
    std::atomic<bool> cancel{false};
    std::thread canceller([&] {
      while (server.requests() == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      cancel.store(true);
    });
    const auto start = std::chrono::steady_clock::now();
    const auto response = client.send(get(server.base_url() + "/"), &cancel);
    const auto waited = std::chrono::steady_clock::now() - start;
    canceller.join();
    ASSERT_FALSE(response.ok()) << tls;
    EXPECT_EQ(response.error(), net::errc::cancelled) << tls << " " << response.detail();
    EXPECT_LT(waited, std::chrono::milliseconds(2500)) << tls;
  }
  TestHttpServer quick(
      [](const ServerRequest&) {
        return ServerResponse{200, {}, "on time", 0};
      },
      false);
  const std::atomic<bool> never{false};
  const auto answered = net::HttpClient({}, "").send(get(quick.base_url() + "/"), &never);
  ASSERT_TRUE(answered.ok()) << why(answered);
  EXPECT_EQ(answered.value().status, 200);
  EXPECT_EQ(answered.value().body, "on time");
}

TEST(HttpClient, AnAnswerOverTheSizeLimitFails) {
  TestHttpServer server(
      [](const ServerRequest&) {
        return ServerResponse{200, {}, std::string(10'000, 'x'), 0};
      },
      false);
  net::HttpClient client({1000, 2000, 4096}, "");
  const auto response = client.send(get(server.base_url() + "/"));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error(), net::errc::too_large) << response.detail();
}

TEST(HttpClient, AChunkedAnswerOverTheSizeLimitFailsToo) {
  TestHttpServer server(
      [](const ServerRequest&) {
        return ServerResponse{200, {{"Transfer-Encoding", "chunked"}}, std::string(10'000, 'x'), 0};
      },
      false);
  net::HttpClient client({1000, 2000, 4096}, "");
  const auto response = client.send(get(server.base_url() + "/"));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error(), net::errc::too_large) << response.detail();
}

TEST(HttpClient, ARefusedConnectionIsAnError) {
  std::uint16_t port = 0;
  {
    TestHttpServer server([](const ServerRequest&) { return ServerResponse{}; }, false);
    port = server.port();
  }
  net::HttpClient client({500, 800, 4096}, "");
  const auto response = client.send(get("http://127.0.0.1:" + std::to_string(port) + "/"));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error(), net::errc::unreachable);
  EXPECT_NE(response.detail().find("connect failed"), std::string::npos) << response.detail();
}

TEST(HttpClient, ACaFileThatCannotBeLoadedIsAStartUpError) {
  EXPECT_THROW(net::HttpClient({}, "/nonexistent/ca.pem"), std::runtime_error);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

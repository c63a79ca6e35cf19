// A small HTTP(S) server on a loopback port for tests of outbound calls (the gateway query and
// refund clients): each request is answered by a handler, one request per connection, in a thread
// of its own; https uses a certificate signed by a CA made at test time (make_test_ca).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace seatflow::testing {

struct ServerRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  [[nodiscard]] std::string header(const std::string& name) const;
};

struct ServerResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  int delay_ms = 0;  // wait this long before answering (deadline tests)
};

using ServerHandler = std::function<ServerResponse(const ServerRequest&)>;

// A CA and a server certificate for 127.0.0.1/localhost signed by it, made with the openssl
// command in a temporary folder of the test process.
struct TestCa {
  std::string ca_pem_path;
  std::string server_cert_path;
  std::string server_key_path;
};
[[nodiscard]] const TestCa& make_test_ca();

class TestHttpServer {
 public:
  // tls: serve https with make_test_ca()'s server certificate.
  TestHttpServer(ServerHandler handler, bool tls);
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  [[nodiscard]] std::uint16_t port() const { return port_; }
  // "http(s)://127.0.0.1:<port>"
  [[nodiscard]] std::string base_url() const;
  [[nodiscard]] int requests() const { return requests_.load(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ServerHandler handler_;
  bool tls_;
  std::uint16_t port_ = 0;
  std::atomic<int> requests_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace seatflow::testing

// Functional-test helpers: a running engine on its own port, signed hmac bodies, metric scraping.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "domain/clock.hpp"
#include "support/http_client.hpp"
#include "support/process.hpp"

namespace seatflow::testing {

// The callback secret every functional engine is started with (prod rules: at least 16 bytes).
inline constexpr const char* kTestSecret = "functional-test-secret-7f3a9c1e5b";
inline constexpr const char* kHmacNotifyPath = "/api/payment/notify/hmac";

// A complete hmac callback body signed with `secret` (SPEC §5), as the gateway sends it.
[[nodiscard]] std::string signed_body(const std::string& callback_id, const std::string& payment_no,
                                      int status,
                                      std::int64_t timestamp_ms = domain::unix_time_ms(),
                                      const std::string& secret = kTestSecret);
// The `sign` field of a JSON callback body ("" when absent).
[[nodiscard]] std::string sign_of(const std::string& body);

// The value of one sample in Prometheus text, e.g.
// metric_value(text, R"(seatflow_payment_callback_total{channel="hmac",result="applied"})").
[[nodiscard]] std::optional<double> metric_value(const std::string& metrics_text,
                                                 std::string_view series);
[[nodiscard]] std::string callback_series(std::string_view result,
                                          std::string_view channel = "hmac");

// `seatflow serve` on a free loopback port, with the test stores, kTestSecret and `extra` env
// (which overrides the defaults; spell it `EnvOverrides{{...}}`: a bare braced list is
// ambiguous). Started and waited healthy in the constructor; stopped (SIGTERM,
// bounded) in the destructor. On failure `healthy()` is false and `log()` says why.
class TestEngine {
 public:
  TestEngine() : TestEngine(EnvOverrides{}) {}
  explicit TestEngine(const EnvOverrides& extra);
  ~TestEngine();
  TestEngine(const TestEngine&) = delete;
  TestEngine& operator=(const TestEngine&) = delete;

  [[nodiscard]] bool healthy() const { return healthy_; }
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] EngineProcess& process() { return *process_; }
  [[nodiscard]] std::string log() const { return process_->log(); }
  // The log once it holds `needle`, polled for at most `timeout` (the engine may answer /healthz
  // a moment before it logs that it serves); the log as it is when the time is up.
  [[nodiscard]] std::string await_log(
      std::string_view needle, std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;

  // A fresh connection to the engine.
  [[nodiscard]] std::unique_ptr<HttpClient> connect(int timeout_ms = 5000) const;
  // A connection from another loopback address (`source`, e.g. "127.0.0.2"): another peer.
  [[nodiscard]] std::unique_ptr<HttpClient> connect_from(const std::string& source,
                                                         int timeout_ms = 5000) const;
  // One request on a fresh connection.
  [[nodiscard]] Response get(std::string_view target) const;
  [[nodiscard]] Response notify(std::string_view body, std::string_view channel = "hmac") const;
  // Any request on a fresh connection (Host and Content-Length are added).
  [[nodiscard]] Response request(std::string_view method, std::string_view target,
                                 std::string_view body = {}, const HeaderList& headers = {}) const;
  // An orders/payments API request on a fresh connection: `Authorization: Bearer <token>` unless
  // `token` is empty, and `Content-Type: application/json` when there is a body.
  [[nodiscard]] Response api(std::string_view method, std::string_view target,
                             std::string_view token, std::string_view body = {}) const;
  [[nodiscard]] std::string metrics() const;
  // One callback counter of this engine (0 when the line is missing, which fails the test).
  [[nodiscard]] double callbacks(std::string_view result, std::string_view channel = "hmac") const;

 private:
  [[nodiscard]] bool serving_here() const;

  std::uint16_t port_ = 0;
  bool healthy_ = false;
  std::unique_ptr<EngineProcess> process_;
};

// The default environment of a functional engine on `port` (stores, secret, address).
[[nodiscard]] EnvOverrides engine_env(std::uint16_t port);

}  // namespace seatflow::testing

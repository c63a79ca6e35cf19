// Starts the real binary for one functional test and talks to it; see engine_fixture.hpp.
#include "support/engine_fixture.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "channels/hmac/hmac_channel.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {

// A port picked by free_port() may be taken by a parallel test before the engine binds it.
constexpr int kStartAttempts = 3;

}  // namespace

std::string signed_body(const std::string& callback_id, const std::string& payment_no, int status,
                        std::int64_t timestamp_ms, const std::string& secret) {
  const channels::HmacChannel channel(channels::HmacConfig{{secret}});
  return channel.signed_body(callback_id, payment_no, status, timestamp_ms);
}

std::string sign_of(const std::string& body) {
  const auto doc = nlohmann::json::parse(body, nullptr, false);
  if (!doc.is_object() || !doc.contains("sign") || !doc["sign"].is_string()) {
    return {};
  }
  return doc["sign"].get<std::string>();
}

std::optional<double> metric_value(const std::string& metrics_text, std::string_view series) {
  std::size_t pos = 0;
  while (pos < metrics_text.size()) {
    auto end = metrics_text.find('\n', pos);
    if (end == std::string::npos) {
      end = metrics_text.size();
    }
    const std::string_view line(metrics_text.data() + pos, end - pos);
    if (line.size() > series.size() + 1 && line.starts_with(series) && line[series.size()] == ' ') {
      try {
        return std::stod(std::string(line.substr(series.size() + 1)));
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    pos = end + 1;
  }
  return std::nullopt;
}

std::string callback_series(std::string_view result, std::string_view channel) {
  std::string series = "seatflow_payment_callback_total{channel=\"";
  series.append(channel).append("\",result=\"").append(result).append("\"}");
  return series;
}

EnvOverrides engine_env(std::uint16_t port) {
  return {
      {"SEATFLOW_PROFILE", "dev"},
      {"SEATFLOW_HTTP_ADDR", "127.0.0.1:" + std::to_string(port)},
      {"SEATFLOW_PG_DSN", test_pg_dsn()},
      {"SEATFLOW_REDIS_URL", test_redis_url()},
      {"SEATFLOW_CALLBACK_SECRETS", kTestSecret},
      {"SEATFLOW_LOG_LEVEL", "info"},
      // The sweeper would cancel other tests' expired orders in the shared database and can make
      // a stop wait for its batch; tests that need it turn it on.
      {"SEATFLOW_SWEEPER", "off"},
      // The relay would publish every test's events to the shared Redis, and retention works on
      // the whole database; the tests of both turn them on with a database of their own.
      {"SEATFLOW_EVENT_RELAY", "off"},
      {"SEATFLOW_RETENTION", "off"},
      // The reconciler would heal the drift other tests create on purpose; tests turn it on.
      {"SEATFLOW_RECONCILE_INTERVAL_MS", "0"},
      // The query scheduler would ask about other tests' payments; the active-query tests turn
      // it on.
      {"SEATFLOW_QUERY", "off"},
  };
}

TestEngine::TestEngine(const EnvOverrides& extra) {
  for (int attempt = 1; attempt <= kStartAttempts; ++attempt) {
    port_ = free_port();
    auto env = engine_env(port_);
    for (const auto& [name, value] : extra) {
      env[name] = value;
    }
    process_ = std::make_unique<EngineProcess>(std::vector<std::string>{"serve"}, env);
    healthy_ = process_->wait_healthy(port_, std::chrono::seconds(15)) && serving_here();
    if (healthy_) {
      return;
    }
    const bool port_taken =
        !process_->running() && process_->log().find("cannot listen") != std::string::npos;
    if (!port_taken) {
      break;
    }
  }
  ADD_FAILURE() << "seatflow did not become healthy on port " << port_ << "; its output:\n"
                << process_->log();
}

// Whether the engine that answered /healthz on port_ is this one: a parallel test's engine may
// have bound the port first (a slow start under the sanitizers leaves it the time), and its
// answer would pass for ours. Ours logs that it serves on port_; one that could not bind exits.
bool TestEngine::serving_here() const {
  const std::string line = "event=serving addr=127.0.0.1:" + std::to_string(port_) + " ";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (process_->running() && std::chrono::steady_clock::now() < deadline) {
    if (process_->log().find(line) != std::string::npos) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return process_->log().find(line) != std::string::npos && process_->running();
}

TestEngine::~TestEngine() {
  if (process_ && process_->running()) {
    const int code = process_->stop(std::chrono::seconds(10));
    EXPECT_EQ(code, 0) << "seatflow exited with " << code << " on SIGTERM; its output:\n"
                       << process_->log();
  }
}

std::unique_ptr<HttpClient> TestEngine::connect(int timeout_ms) const {
  auto client = std::make_unique<HttpClient>(port_, timeout_ms);
  EXPECT_TRUE(client->connected()) << client->connect_error();
  return client;
}

std::unique_ptr<HttpClient> TestEngine::connect_from(const std::string& source,
                                                     int timeout_ms) const {
  auto client = std::make_unique<HttpClient>(port_, timeout_ms, source);
  EXPECT_TRUE(client->connected()) << client->connect_error();
  return client;
}

Response TestEngine::get(std::string_view target) const {
  return connect()->get(target);
}

Response TestEngine::notify(std::string_view body, std::string_view channel) const {
  std::string path = "/api/payment/notify/";
  path.append(channel);
  return connect()->post_json(path, body);
}

Response TestEngine::request(std::string_view method, std::string_view target,
                             std::string_view body, const HeaderList& headers) const {
  return connect()->request(method, target, body, headers);
}

Response TestEngine::api(std::string_view method, std::string_view target, std::string_view token,
                         std::string_view body) const {
  HeaderList headers;
  if (!token.empty()) {
    headers.emplace_back("Authorization", "Bearer " + std::string(token));
  }
  if (!body.empty()) {
    headers.emplace_back("Content-Type", "application/json");
  }
  return request(method, target, body, headers);
}

std::string TestEngine::metrics() const {
  const auto response = get("/metrics");
  EXPECT_EQ(response.status, 200) << response.error;
  return response.body;
}

double TestEngine::callbacks(std::string_view result, std::string_view channel) const {
  const auto series = callback_series(result, channel);
  const auto value = metric_value(metrics(), series);
  EXPECT_TRUE(value.has_value()) << "no metric line " << series;
  return value.value_or(0.0);
}

std::string TestEngine::await_log(std::string_view needle,
                                  std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto text = log();
  while (text.find(needle) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    text = log();
  }
  return text;
}
}  // namespace seatflow::testing

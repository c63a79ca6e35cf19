// libFuzzer target: the HTTP request path of the server on arbitrary bytes. The bytes go through
// the server's own Beast parser set-up (http/request_reader.hpp, with small limits so they are
// reached), in chunks as a socket would deliver them, pipelined requests one after another; each
// parsed request is routed (http/routing.cpp) and a notify runs the pre-engine checks against
// all five channels, a verified callback going to a recording stand-in for the engine's submit.
// The header section also goes through the server's obs-fold scan (wire::HeaderScan) as it arrives.
// Input: byte 0 picks the chunk size, the rest is what a client sent.
#include <boost/asio/buffer.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "channels/alipay/alipay_channel.hpp"
#include "channels/hmac/hmac_channel.hpp"
#include "channels/standard/standard_channel.hpp"
#include "channels/stripe/stripe_channel.hpp"
#include "channels/wechat/wechat_channel.hpp"
#include "fuzz_support.hpp"
#include "http/auth.hpp"
#include "http/probe.hpp"
#include "http/request_reader.hpp"
#include "http/routing.hpp"
#include "observability/registry.hpp"

namespace {

using namespace seatflow;
namespace bhttp = boost::beast::http;

// Small limits, so inputs of -max_len can exceed them (the server's defaults are 64 KiB / 8 KiB).
constexpr std::size_t kBodyLimit = 2048;
constexpr std::size_t kHeaderLimit = 1024;
// A connection's pipelined requests handled per input (the server has no such cap: it reads
// on until the peer stops; here the input's size bounds it anyway).
constexpr int kMaxRequestsPerInput = 64;

const http::HttpConfig& http_config() {
  static const http::HttpConfig config = [] {
    http::HttpConfig c;
    c.body_bytes_max = kBodyLimit;
    c.header_bytes_max = kHeaderLimit;
    return c;
  }();
  return config;
}

const channels::Registry& registry() {
  static const channels::Registry instance = [] {
    channels::Registry r;
    r.add(std::make_unique<channels::HmacChannel>(channels::HmacConfig{{"fuzz-secret"}, 300'000}));
    r.add(std::make_unique<channels::AlipayChannel>(channels::AlipayRules{"2021000000000001", ""},
                                                    fuzz::throwaway_key()));
    r.add(std::make_unique<channels::WechatChannel>(
        channels::WechatRules{"1900000001", "0123456789abcdef0123456789abcdef"},
        channels::WechatPlatformKeys{{"SERIAL-1", fuzz::throwaway_key()}}));
    r.add(std::make_unique<channels::StripeChannel>(
        channels::StripeConfig{{"whsec_fuzz_secret"}, "cny", 300'000}));
    r.add(std::make_unique<channels::StandardChannel>(
        channels::StandardConfig{{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, 300'000}));
    return r;
  }();
  return instance;
}

const http::Authenticator& authenticator() {
  static const http::Authenticator instance(
      http::AuthSettings{"fuzz-api-token-0123456789", "fuzz-api-jwt-key-0123456789", 3'600});
  return instance;
}

// What the engine's submit would have been handed.
std::size_t submitted = 0;

void check_response(const http::HttpResponse& response) {
  fuzz::require(response.status >= 200 && response.status <= 599, "response status out of range");
  fuzz::require(response.body.size() < 512, "response body long (does it echo input?)");
}

void handle(http::HttpRequest&& request, observability::Registry& metrics, http::HttpProbe& probe) {
  for (const auto& [name, value] : request.headers) {
    for (const char c : name) {
      fuzz::require(!(c >= 'A' && c <= 'Z'), "header name not lower-cased");
    }
  }
  fuzz::require(request.body.size() <= kBodyLimit, "body over the limit reached the handler");
  const auto route = http::route_request(request.method, request.target);
  fuzz::require(route.path.size() <= request.target.size(), "route path outside the target");
  switch (route.kind) {
    case http::RouteKind::notify: {
      auto checked = http::check_notify(registry(), route.channel, request, fuzz::kNowMs, probe);
      if (!checked.ok()) {
        const auto refusal =
            http::notify_refusal(registry().find(route.channel), checked.failure());
        check_response(refusal);
        const int status = refusal.status;
        fuzz::require(status == 400 || status == 401 || status == 404,
                      "a refused notify answers neither 400, 401 nor 404");
      } else {
        const auto& callback = checked.value();
        fuzz::check_verified(callback);
        fuzz::require(registry().find(callback.channel) == registry().find(route.channel),
                      "a channel verified a callback for another channel");
        ++submitted;
      }
      break;
    }
    case http::RouteKind::orders_api: {
      const auto header = request.headers.find("authorization");
      const auto result = authenticator().check(
          header == request.headers.end() ? "" : header->second, fuzz::kNowMs / 1000);
      fuzz::require(result.error() != http::errc::api_disabled,
                    "a configured token reads as disabled");
      break;
    }
    case http::RouteKind::metrics:
      fuzz::require(!metrics.serialize().empty(), "empty metrics");
      break;
    case http::RouteKind::healthz:
    case http::RouteKind::readyz:
      fuzz::require(request.method == "GET", "a probe route for a method other than GET");
      break;
    case http::RouteKind::console:
      fuzz::require(request.method == "GET", "a console route for a method other than GET");
      fuzz::require(route.path.starts_with("/console"), "a console route outside /console");
      break;
    case http::RouteKind::method_not_allowed:
    case http::RouteKind::not_found:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::size_t chunk = 1 + data[0] % 64 * (data[0] >= 192 ? 256 : 1);
  const auto wire = fuzz::as_text(data + 1, size - 1);
  observability::Registry metrics;
  http::HttpProbe probe(metrics);
  std::size_t pos = 0;      // bytes consumed by the parsers so far
  std::size_t arrived = 0;  // bytes "received" so far (grows chunk by chunk)
  arrived = std::min(wire.size(), chunk);
  for (int n = 0; n < kMaxRequestsPerInput && pos < wire.size(); ++n) {
    http::wire::RequestParser parser;
    http::wire::apply_limits(parser, http_config());
    http::wire::HeaderScan scan;  // the server's obs-fold check, on the same bytes as the parser
    boost::beast::error_code ec;
    for (;;) {
      if (scan.scan(wire.substr(pos, arrived - pos)) == http::wire::HeaderScan::State::folded) {
        return 0;  // answered 400 and closed by the server
      }
      const auto used = parser.put(boost::asio::buffer(wire.data() + pos, arrived - pos), ec);
      scan.consumed(used);
      pos += used;
      fuzz::require(pos <= arrived, "parser consumed bytes that had not arrived");
      if (ec == bhttp::error::need_more) {
        if (arrived == wire.size()) {
          // The peer stopped sending mid-request: what the server's read sees at end of stream.
          parser.put_eof(ec);
          break;
        }
        arrived = std::min(wire.size(), arrived + chunk);
        ec = {};
        continue;
      }
      if (ec || parser.is_done()) {
        break;
      }
      if (used == 0) {
        // Nothing consumed without an error: more bytes are needed.
        if (arrived == wire.size()) {
          parser.put_eof(ec);
          break;
        }
        arrived = std::min(wire.size(), arrived + chunk);
      }
    }
    if (ec) {
      if (!http::wire::is_disconnect(ec)) {
        const auto response = http::wire::parse_failure_response(ec);
        check_response(response);
        fuzz::require(response.status == 400 || response.status == 413 || response.status == 431,
                      "a parse failure answers neither 400, 413 nor 431");
      }
      return 0;  // the server closes the connection after a failed read
    }
    fuzz::require(parser.is_done(), "the parser stopped without a message or an error");
    auto message = parser.release();
    const bool keep_alive = message.keep_alive();
    handle(http::wire::to_request(std::move(message)), metrics, probe);
    if (!keep_alive) {
      return 0;
    }
  }
  return 0;
}

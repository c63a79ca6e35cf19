// The HTTP front's settings (README "Limits"): app/ parses the environment into HttpConfig and
// ApiSettings, whose defaults are these.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "domain/types.hpp"
#include "http/auth.hpp"
#include "http/rate_limiter.hpp"
#include "http/source.hpp"

namespace seatflow::http {

// What the notify endpoint checks before it parses a request (SPEC §14, http/front_door.hpp).
struct FrontDoorSettings {
  std::vector<Cidr> trusted_proxies;  // SEATFLOW_TRUSTED_PROXIES: whose X-Forwarded-For counts
  RateSettings unverified;            // the buckets of notifies that fail verification or parsing
  // One bucket per trusted proxy that every source behind it spends too, so a client rotating its
  // X-Forwarded-For address is bounded as well: SEATFLOW_UNVERIFIED_PER_PROXY_TOKENS_PER_S and
  // SEATFLOW_UNVERIFIED_PER_PROXY_BURST_TOKENS_MAX; at most kProxyBucketsMax proxies are tracked.
  RateSettings per_proxy{200, 1'000, kProxyBucketsMax};
  // SEATFLOW_<CHANNEL>_ALLOWED_SOURCES by channel; nullopt = any source.
  std::array<std::optional<std::vector<Cidr>>, domain::kChannelCount> allowed_sources;
};

struct HttpConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  std::size_t io_threads = 2;  // one io_context each; bench/tune.sh (docs/BENCHMARKS.md)
  std::size_t body_bytes_max = 64 * 1024;
  std::size_t header_bytes_max = 8 * 1024;
  std::uint32_t read_timeout_ms = 10'000;    // a whole request must arrive within this
  std::uint32_t idle_timeout_ms = 60'000;    // keep-alive connections idle longer are closed
  std::uint32_t header_timeout_ms = 10'000;  // a new connection's first byte must arrive by then
  std::size_t connections_max = 10'000;
  std::size_t connections_per_source_max = 256;  // open connections of one TCP peer address
  std::size_t inflight_callbacks_max = 4'096;    // verified callbacks awaiting their commit
  std::size_t inflight_api_max = 256;            // API requests awaiting the store; more → 503
  FrontDoorSettings front_door;
};

// What the authenticated API (SPEC §7) needs beyond the limits above.
struct ApiSettings {
  std::int64_t order_timeout_ms =
      15 * 60 * 1000;  // SEATFLOW_ORDER_TIMEOUT_MS: expires_at = now + this
  AuthSettings auth;   // set by app/ from the token settings
};

}  // namespace seatflow::http

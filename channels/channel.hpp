// The gateway-dialect interface: raw body bytes and lower-cased headers in, a verified callback or
// a precise rejection (a failure of channels::errc) out. Implementations are pure (OpenSSL only)
// and safe to call from any thread.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "channels/errc.hpp"
#include "codec/headers.hpp"
#include "domain/types.hpp"

namespace seatflow::channels {

struct InboundRequest {
  std::string_view body;                    // the raw bytes, exactly as received
  const codec::Headers* headers = nullptr;  // names lower-cased by the HTTP layer
  std::int64_t now_ms = 0;                  // wall-clock time in epoch milliseconds
  // Only for an authenticated operator replay of a stored request (SPEC §12): the signature must
  // still verify under today's keys, but its timestamp may be older than the freshness window.
  bool freshness_waived = false;
};

// The rejection kinds are the channels' error codes (channels/errc.hpp); http/status.hpp says how
// each is answered. A rejection is a Result's failure: its code, and a short, log-safe detail.
using RejectReason = errc;

// The largest body of any gateway message SeatFlow reads — a callback of any dialect, a query
// answer; beyond it the message is malformed. The HTTP body limit may not exceed it (app/config
// refuses such a SEATFLOW_BODY_BYTES_MAX at start-up).
inline constexpr std::size_t kGatewayBodyBytesMax = 256 * 1024;

// The refusal of a message whose signature verified but whose timestamp is outside the window;
// dialects check the signature first, so a forgery is never `stale` (SPEC §14). The failure names
// the skew (kStaleSkewKey): the engine's clock minus the signed timestamp, in milliseconds
// (positive when the message looks older than it is allowed to be, as when the engine's clock runs
// ahead). The skew saturates: a signed timestamp may be any int64.
inline constexpr std::string_view kStaleSkewKey = "skewMs";

[[nodiscard]] inline Failure reject_stale(std::int64_t now_ms, std::int64_t timestamp_ms) {
  std::int64_t skew_ms = 0;
  if (__builtin_sub_overflow(now_ms, timestamp_ms, &skew_ms)) {
    skew_ms = timestamp_ms < 0 ? std::numeric_limits<std::int64_t>::max()
                               : std::numeric_limits<std::int64_t>::min();
  }
  return Failure{make_error_code(errc::stale), "timestamp outside the accepted window",
                 domain::Named{kStaleSkewKey, std::to_string(skew_ms)}};
}

// The skew a `stale` failure names (reject_stale), 0 for any other failure.
[[nodiscard]] inline std::int64_t stale_skew_ms(const Failure& failure) {
  if (failure.code != make_error_code(errc::stale) || failure.named.key != kStaleSkewKey) {
    return 0;
  }
  std::int64_t skew_ms = 0;
  const auto& text = failure.named.value;
  std::from_chars(text.data(), text.data() + text.size(), skew_ms);
  return skew_ms;
}

class Channel {
 public:
  virtual ~Channel() = default;
  [[nodiscard]] virtual domain::Channel id() const = 0;
  [[nodiscard]] virtual Result<domain::VerifiedCallback> verify(
      const InboundRequest& request) const = 0;
  // The body and content type that tell this gateway "received, stop retrying".
  [[nodiscard]] virtual std::string_view ack_body() const = 0;
  [[nodiscard]] virtual std::string_view content_type() const = 0;
  // The body for a non-200 answer in this gateway's dialect.
  [[nodiscard]] virtual std::string failure_body(std::string_view message) const = 0;
  // The lower-cased headers verify() reads, kept with the raw body of a verified callback so a
  // replay can verify it again (SPEC §12). Signature headers only: never a secret.
  [[nodiscard]] virtual std::span<const std::string_view> read_headers() const { return {}; }
};

}  // namespace seatflow::channels

// The gateway-dialect interface: raw body bytes and lower-cased headers in, a verified callback or
// a precise rejection (a failure of channels::errc) out. Implementations are pure (OpenSSL only)
// and safe to call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "channels/errc.hpp"
#include "domain/types.hpp"

namespace seatflow::channels {

// Header names are lower-cased by the HTTP layer before they reach a channel.
using Headers = std::map<std::string, std::string, std::less<>>;

struct InboundRequest {
  std::string_view body;  // the raw bytes, exactly as received
  const Headers* headers = nullptr;
  std::int64_t now_ms = 0;  // wall-clock time in epoch milliseconds
  // Only for an authenticated operator replay of a stored request (SPEC §12): the signature must
  // still verify under today's keys, but its timestamp may be older than the freshness window.
  bool freshness_waived = false;
};

// The rejection kinds are the channels' error codes (channels/errc.hpp); http/status.hpp says how
// each is answered. A rejection is a Result's failure: its code, and a short, log-safe detail.
using RejectReason = errc;

// The largest body of any gateway message SeatFlow reads — a callback of any dialect, a query
// answer; beyond it the message is malformed. The HTTP body limit may not exceed it (app/config
// refuses such a SEATFLOW_BODY_LIMIT_BYTES at start-up).
inline constexpr std::size_t kGatewayBodyBytesMax = 256 * 1024;

// The value of header `name` (lower-case), nullopt when `headers` is null, or the header is absent
// or empty.
[[nodiscard]] std::optional<std::string_view> header_value(const Headers* headers,
                                                           std::string_view name);

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

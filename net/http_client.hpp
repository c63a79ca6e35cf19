// The one outbound HTTP(S) client (Boost.Beast): gateway queries and refunds, the dev mock
// gateway's deliveries. Blocking — call it from a detached actor or a thread of its own, never
// from an io thread or the CAF scheduler — with a connect deadline and a total deadline on every
// call, a bounded response, and TLS verified against the system CA store or a configured CA file.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/message.hpp"

namespace seatflow::net {

// Every call's limits (defaults are SeatFlow's; the query settings override them).
struct ClientLimits {
  std::uint32_t connect_timeout_ms = 2000;      // resolve + TCP connect (+ TLS handshake)
  std::uint32_t total_timeout_ms = 5000;        // the whole exchange, connect included
  std::size_t response_bytes_max = 256 * 1024;  // header + body; larger answers fail
};
inline constexpr std::uint32_t kTimeoutMsMax = 60'000;
inline constexpr std::size_t kResponseBytesMax = 16 * 1024 * 1024;

// What a client's limits are clamped to: a query's or refund's answer (the default), or a daily
// bill's download (SPEC §13: up to SEATFLOW_BILL_BYTES_MAX, fetched for longer).
struct ClientBounds {
  std::uint32_t timeout_ms_max = kTimeoutMsMax;
  std::size_t response_bytes_max = kResponseBytesMax;
};
inline constexpr std::uint32_t kBillTimeoutMsMax = 3'600'000;
inline constexpr std::size_t kBillResponseBytesMax = std::size_t{1} << 30;
inline constexpr ClientBounds kBillBounds{kBillTimeoutMsMax, kBillResponseBytesMax};
static_assert(kBillTimeoutMsMax >= kTimeoutMsMax && kBillResponseBytesMax >= kResponseBytesMax);

// How often a cancellable exchange looks at its cancel flag.
inline constexpr std::uint32_t kCancelPollMs = 50;

// A streamed answer (a bill's download, SPEC §13): told the status and headers first, then handed
// the body piece by piece as it arrives, so a body of hundreds of MB is never held whole.
class BodySink {
 public:
  virtual ~BodySink() = default;
  // The status and headers arrived (`head` has no body). True: the body goes to piece(); false:
  // it is kept in the Response as without a sink.
  [[nodiscard]] virtual bool begin(const Response& head) = 0;
  // The next piece of the body; false ends the exchange (error "body refused by its reader").
  [[nodiscard]] virtual bool piece(std::string_view bytes) = 0;
};

class HttpClient {
 public:
  // `ca_file`: PEM bundle to trust for https; empty = the system's default CA store. Throws
  // std::runtime_error when the CA file cannot be loaded. `limits` are clamped to `bounds`.
  HttpClient(ClientLimits limits, const std::string& ca_file, ClientBounds bounds = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One request on a fresh connection; never throws. The answer, whatever its status, or the
  // net::errc failure of an exchange that brought none. Blocks for at most total_timeout_ms, and
  // when `cancel` is given, ends within kCancelPollMs of it turning true once connected
  // (errc::cancelled: the socket is closed under the exchange). With `sink`, the body goes to it
  // piece by piece when its begin() takes it (the Response's body then stays empty); the
  // response_bytes_max bound holds either way.
  [[nodiscard]] Result<Response> send(const Request& request,
                                      const std::atomic<bool>* cancel = nullptr,
                                      BodySink* sink = nullptr) const;

  [[nodiscard]] const ClientLimits& limits() const { return limits_; }

 private:
  struct Tls;
  ClientLimits limits_;
  std::unique_ptr<Tls> tls_;
};

}  // namespace seatflow::net

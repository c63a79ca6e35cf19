// The `hmac` dialect (SPEC §5): JSON body signed with HMAC-SHA256 over four newline-joined fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "channels/channel.hpp"
#include "domain/ids.hpp"

namespace seatflow::channels {

struct HmacConfig {
  // The first secret signs; every secret verifies (rotation without downtime). Never logged.
  std::vector<std::string> secrets;
  std::int64_t window_ms = 300'000;  // |now - timestamp| must not exceed this
};

// callbackId and paymentNo that are empty, longer than this (in bytes) or hold ASCII control
// characters (a newline would make the canonical string ambiguous) are malformed: the one id rule
// (domain/ids.hpp) under IdRule::printable_bytes, which does not ask for UTF-8.
inline constexpr std::size_t kHmacMaxIdBytes = domain::id_bytes_max;

// The canonical string: callbackId "\n" paymentNo "\n" status "\n" timestamp.
[[nodiscard]] std::string hmac_canonical(std::string_view callback_id, std::string_view payment_no,
                                         int status, std::int64_t timestamp_ms);

// Each secret is keyed once into an OpenSSL HMAC context; every thread that verifies or signs
// gets its own copies on first use (contexts are not thread-safe) and re-initialises them per call.
// verify() and sign() may run concurrently. They throw only when OpenSSL itself fails (resource
// exhaustion); every problem with the request is a rejection (a failure of channels::errc).
class HmacChannel final : public Channel {
 public:
  // Throws std::invalid_argument without secrets, with an empty secret or a negative window.
  explicit HmacChannel(HmacConfig config);
  ~HmacChannel() override;
  HmacChannel(const HmacChannel&) = delete;
  HmacChannel& operator=(const HmacChannel&) = delete;

  [[nodiscard]] domain::Channel id() const override { return domain::Channel::hmac; }
  [[nodiscard]] Result<domain::VerifiedCallback> verify(
      const InboundRequest& request) const override;
  [[nodiscard]] std::string_view ack_body() const override { return "success"; }
  [[nodiscard]] std::string_view content_type() const override { return "text/plain"; }
  [[nodiscard]] std::string failure_body(std::string_view message) const override;

  // Lowercase hex HMAC-SHA256 under the first (signing) secret.
  [[nodiscard]] std::string sign(std::string_view callback_id, std::string_view payment_no,
                                 int status, std::int64_t timestamp_ms) const;
  // A complete signed JSON body, as a gateway (or the mock gateway, or the benchmark) sends it.
  // The ids must be valid UTF-8 (nlohmann::json::type_error otherwise).
  [[nodiscard]] std::string signed_body(std::string_view callback_id, std::string_view payment_no,
                                        int status, std::int64_t timestamp_ms) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seatflow::channels

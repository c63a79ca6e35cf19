// The `wechat` dialect (SPEC §5): WeChat Pay v3 notify — Wechatpay-* header signature, AES-GCM.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "channels/channel.hpp"
#include "codec/crypto.hpp"

namespace seatflow::channels {

struct WechatPlatformKeyPath {
  std::string serial;    // Wechatpay-Serial that selects this key
  std::string pem_path;  // platform public key or certificate (PEM)
};

// What start-up reads from SEATFLOW_WECHAT_*; make_wechat_channel loads the key files.
struct WechatConfig {
  std::string mchid;      // must equal the decrypted transaction's mchid
  std::string apiv3_key;  // exactly 32 bytes; decrypts the resource. Never logged
  std::vector<WechatPlatformKeyPath> platform_keys;  // several at once during a rotation
  std::int64_t window_ms = 300'000;                  // |now - Wechatpay-Timestamp| bound
};

// Lower-cased header names as the HTTP layer hands them over.
inline constexpr std::string_view kWechatTimestampHeader = "wechatpay-timestamp";
inline constexpr std::string_view kWechatNonceHeader = "wechatpay-nonce";
inline constexpr std::string_view kWechatSignatureHeader = "wechatpay-signature";
inline constexpr std::string_view kWechatSerialHeader = "wechatpay-serial";
inline constexpr std::array<std::string_view, 4> kWechatReadHeaders = {
    kWechatTimestampHeader, kWechatNonceHeader, kWechatSignatureHeader, kWechatSerialHeader};
// WeChat Pay sends signatures with this prefix to probe whether a merchant really verifies.
inline constexpr std::string_view kWechatProbePrefix = "WECHATPAY/SIGNTEST/";

// Bounds on attacker-controlled input.
inline constexpr std::size_t kWechatMaxHeaderBytes = 1024;           // each Wechatpay-* value
inline constexpr std::size_t kWechatMaxSignatureBytes = 1024;        // decoded; RSA up to 8192 bits
inline constexpr std::size_t kWechatMaxCiphertextBytes = 64 * 1024;  // base64 text of resource
inline constexpr std::size_t kWechatMaxFieldBytes = 256;  // nonce, associated_data, states

// The notification body's outer fields, read after the signature has verified.
struct WechatNotification {
  std::string id;          // the callback id
  std::string ciphertext;  // base64
  std::string nonce;
  std::string associated_data;
};
[[nodiscard]] Result<WechatNotification> parse_wechat_notification(std::string_view body);

// The decrypted transaction → a callback (without payload_sha256). mchid must match.
[[nodiscard]] Result<domain::VerifiedCallback> parse_wechat_transaction(
    std::string_view plaintext, std::string_view expected_mchid);

// Everything after the signature: body fields, resource decryption, transaction. Exposed for
// tests and fuzzing.
struct WechatRules {
  std::string mchid;
  std::string apiv3_key;
};
[[nodiscard]] Result<domain::VerifiedCallback> wechat_callback_from_body(std::string_view body,
                                                                         const WechatRules& rules);

using WechatPlatformKeys = std::vector<std::pair<std::string, codec::SharedKey>>;  // serial → key

// At least one key; every serial non-empty and unique, every key non-null.
[[nodiscard]] bool valid_platform_keys(const WechatPlatformKeys& keys);

// The Wechatpay-* header signature over `timestamp\nnonce\nbody\n`, as WeChat Pay signs both its
// notifies and its API answers: the four headers present and bounded, a probe signature refused,
// the timestamp within `window_ms` of now (checked before any RSA work), the key named by
// Wechatpay-Serial. nullopt when it verifies; never logs.
[[nodiscard]] Result<void> verify_wechat_signature(const WechatPlatformKeys& keys,
                                                   const codec::Headers* headers,
                                                   std::string_view body, std::int64_t now_ms,
                                                   std::int64_t window_ms,
                                                   bool freshness_waived = false);

// Verifies with the platform key named by Wechatpay-Serial; verify() is thread-safe, never logs.
class WechatChannel final : public Channel {
 public:
  // Throws std::invalid_argument without keys, with a null key, an empty or repeated serial,
  // an empty mchid, an APIv3 key that is not 32 bytes, or a negative window.
  WechatChannel(WechatRules rules, WechatPlatformKeys keys, std::int64_t window_ms = 300'000);

  [[nodiscard]] domain::Channel id() const override { return domain::Channel::wechat; }
  [[nodiscard]] Result<domain::VerifiedCallback> verify(
      const InboundRequest& request) const override;
  [[nodiscard]] std::string_view ack_body() const override;
  [[nodiscard]] std::string_view content_type() const override { return "application/json"; }
  // {"code":"FAIL","message":<message>}
  [[nodiscard]] std::string failure_body(std::string_view message) const override;
  [[nodiscard]] std::span<const std::string_view> read_headers() const override {
    return kWechatReadHeaders;
  }

 private:
  WechatRules rules_;
  WechatPlatformKeys keys_;
  std::int64_t window_ms_;
};

// Loads every platform key file; errc::bad_config with a one-line reason (naming the serial)
// when one cannot be used.
[[nodiscard]] Result<std::unique_ptr<Channel>> make_wechat_channel(const WechatConfig& config);

}  // namespace seatflow::channels

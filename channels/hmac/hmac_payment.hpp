// The `hmac` gateway's payment at the gateway (SPEC §16): JSON bodies signed like its refunds
// (channels/hmac/hmac_gateway_mac.hpp: lowercase hex HMAC-SHA256 under the first callback secret
// over newline-joined fields, verified under any secret and within the callback window; timestamps
// in epoch ms). Both sides live here: SeatFlow's requests and answer checks, and the gateway's
// request checks and answers (the dev mock gateway and the tests' fake use them).
//
// Create: POST {base}/api/gateway/payments
//   {"paymentNo", "amountCents", "expiresAt" (epoch ms; 0 = no deadline), "notifyUrl",
//    "timestamp", "sign"}, sign over hmac_create_sign_content:
//    paymentNo \n amountCents \n expiresAt \n notifyUrl \n timestamp
//   → 200 {"paymentNo", "payUrl", "timestamp", "sign"}, sign over
//     hmac_create_answer_sign_content: paymentNo \n payUrl \n timestamp.
//   The gateway creates a payment number at most once: asking again answers the same payUrl.
// Close: POST {base}/api/gateway/payments/{paymentNo}/close (hmac_close_path: the number
//   form-encoded as one path segment; the gateway reads it back with hmac_close_payment_no and
//   checks it against the body's)
//   {"paymentNo", "timestamp", "sign"}, sign over hmac_close_sign_content: paymentNo \n timestamp
//   (the refund's pattern: the request's own fields, then its timestamp)
//   → 200 {"paymentNo", "status": "closed" | "paid" | "not_found", "timestamp", "sign"}, sign over
//     hmac_close_answer_sign_content: paymentNo \n status \n timestamp. not_found is closed.
// A refusal of either (any status but 200, e.g. 409 for a payment whose deadline has passed):
//   {"paymentNo", "error", "timestamp", "sign"}, `error` a code starting with a letter
//   ([A-Za-z][A-Za-z0-9._-]*, e.g. "expired"), sign over hmac_refusal_sign_content:
//   "refusal" \n paymentNo \n error \n timestamp. The leading word and the field count keep it
//   apart from every other signed content of this gateway (and from a §5 callback, whose third
//   field is a number). An answer that is neither is a rejection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "channels/hmac/hmac_channel.hpp"
#include "channels/hmac/hmac_query.hpp"
#include "channels/payment_gateway.hpp"

namespace seatflow::channels {

// The paths under the gateway's base URL: the create; the close is kHmacQueryPath (its
// "/api/gateway/payments/"), the payment number, kHmacClosePathSuffix.
inline constexpr std::string_view kHmacCreatePath = "/api/gateway/payments";
inline constexpr std::string_view kHmacClosePathSuffix = "/close";
// Request and answer bodies larger than this are malformed; a notifyUrl longer than this too.
inline constexpr std::size_t kHmacPaymentBodyBytesMax = 4096;
inline constexpr std::size_t kHmacNotifyUrlBytesMax = 1024;
// The first field of a refusal's signed content.
inline constexpr std::string_view kHmacRefusalWord = "refusal";

// A create request as the gateway reads it.
struct HmacCreateRequest {
  std::string payment_no;
  std::int64_t amount_cents = 0;
  std::int64_t expires_at_ms = 0;  // 0 = no deadline
  std::string notify_url;
  std::int64_t timestamp_ms = 0;
};

// A close request as the gateway reads it.
struct HmacCloseRequest {
  std::string payment_no;
  std::int64_t timestamp_ms = 0;
};

enum class HmacCloseStatus : std::uint8_t { closed, paid, not_found };
[[nodiscard]] std::string_view to_string(HmacCloseStatus status);

// The signed contents (see the top of this file).
[[nodiscard]] std::string hmac_create_sign_content(const HmacCreateRequest& request);
[[nodiscard]] std::string hmac_create_answer_sign_content(std::string_view payment_no,
                                                          std::string_view pay_url,
                                                          std::int64_t timestamp_ms);
[[nodiscard]] std::string hmac_close_sign_content(std::string_view payment_no,
                                                  std::int64_t timestamp_ms);
[[nodiscard]] std::string hmac_close_answer_sign_content(std::string_view payment_no,
                                                         std::string_view status,
                                                         std::int64_t timestamp_ms);
[[nodiscard]] std::string hmac_refusal_sign_content(std::string_view payment_no,
                                                    std::string_view error,
                                                    std::int64_t timestamp_ms);

// The close path of a payment (without the base's own path), and the payment number of such a
// path (nullopt when `path` is not one).
[[nodiscard]] std::string hmac_close_path(std::string_view payment_no);
[[nodiscard]] std::optional<std::string> hmac_close_payment_no(std::string_view path);

// A refusal's error code: [A-Za-z][A-Za-z0-9._-]*, at most codec::kLogSafeCodeBytesMax bytes.
[[nodiscard]] bool valid_hmac_refusal_error(std::string_view error);

// The gateway's side: a request checked (shape, signature under any secret, window); refused
// otherwise as malformed, bad_signature or stale, the detail saying why.
[[nodiscard]] Result<HmacCreateRequest> hmac_create_read_request(
    std::string_view body, const std::vector<std::string>& secrets, std::int64_t now_ms,
    std::int64_t window_ms);
[[nodiscard]] Result<HmacCloseRequest> hmac_close_read_request(
    std::string_view body, const std::vector<std::string>& secrets, std::int64_t now_ms,
    std::int64_t window_ms);
// The gateway's signed answer bodies (`pay_url` a valid_pay_value, `error` a
// valid_hmac_refusal_error).
[[nodiscard]] std::string hmac_create_answer_body(std::string_view secret,
                                                  std::string_view payment_no,
                                                  std::string_view pay_url, std::int64_t now_ms);
[[nodiscard]] std::string hmac_close_answer_body(std::string_view secret,
                                                 std::string_view payment_no,
                                                 HmacCloseStatus status, std::int64_t now_ms);
[[nodiscard]] std::string hmac_refusal_body(std::string_view secret, std::string_view payment_no,
                                            std::string_view error, std::int64_t now_ms);

class HmacPayment final : public PaymentGatewayDialect {
 public:
  // `config.secrets` are the callback secrets (the first signs); `gateway` is the base URL
  // (SEATFLOW_HMAC_GATEWAY_URL). Throws std::invalid_argument without a secret, with an empty one
  // or a negative window.
  HmacPayment(HmacConfig config, net::Url gateway);
  ~HmacPayment() override;
  HmacPayment(const HmacPayment&) = delete;
  HmacPayment& operator=(const HmacPayment&) = delete;

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::hmac; }
  // errc::unusable without a printable payment number, a positive amount, or a printable notify
  // URL of at most kHmacNotifyUrlBytesMax bytes.
  [[nodiscard]] Result<net::Request> create_request(const CreateTarget& target,
                                                    std::int64_t now_ms) const override;
  [[nodiscard]] Result<CreateAnswer> create_answer(const CreateTarget& target,
                                                   const net::Response& response,
                                                   std::int64_t now_ms) const override;
  // errc::unusable without a printable payment number.
  [[nodiscard]] Result<net::Request> close_request(const CloseTarget& target,
                                                   std::int64_t now_ms) const override;
  [[nodiscard]] Result<CloseAnswer> close_answer(const CloseTarget& target,
                                                 const net::Response& response,
                                                 std::int64_t now_ms) const override;

 private:
  [[nodiscard]] net::Request post(std::string path, std::string body) const;

  HmacConfig config_;
  net::Url gateway_;
};

}  // namespace seatflow::channels

// hmac payment: the signed create and close bodies of both sides, and the answers' checks.
#include "channels/hmac/hmac_payment.hpp"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "channels/hmac/hmac_gateway_mac.hpp"
#include "codec/crypto.hpp"
#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

constexpr std::size_t kHmacPaymentSignHexChars = 2 * codec::kHmacSha256Bytes;

using HmacSignContent = std::string (*)(std::string_view, std::string_view, std::int64_t);

// A body of at most kHmacPaymentBodyBytesMax bytes that is a JSON object; `doc` is discarded
// otherwise.
json hmac_payment_object(std::string_view body) {
  if (body.empty() || body.size() > kHmacPaymentBodyBytesMax) {
    return json(json::value_t::discarded);
  }
  json doc = json::parse(body, nullptr, false);
  return doc.is_object() ? doc : json(json::value_t::discarded);
}

std::optional<std::int64_t> hmac_payment_int(const json& doc, const char* name) {
  const json* value = codec::json_member(doc, name);
  return value == nullptr ? std::nullopt : codec::json_int64(*value);
}

// A printable string member of 1 to `max_bytes` bytes, else nullptr.
const std::string* hmac_payment_text(const json& doc, const char* name, std::size_t max_bytes) {
  const std::string* text = codec::json_string(doc, name, max_bytes);
  return text == nullptr || text->empty() || !hmac_gateway_printable(*text) ? nullptr : text;
}

const std::string* hmac_payment_sign(const json& doc) {
  return codec::json_string(doc, "sign", kHmacPaymentSignHexChars);
}

// An answer's three signed fields.
struct HmacAnswerFields {
  std::string payment_no;
  std::string value;  // payUrl, status or error
  std::int64_t timestamp_ms = 0;
};

// The gateway's answer: the payment number, the field `name`, the timestamp, the sign over
// `content` of them verified under any secret and within the window.
Result<HmacAnswerFields> hmac_verified_answer(const HmacConfig& config, std::string_view body,
                                              const char* name, HmacSignContent content,
                                              std::int64_t now_ms) {
  const json doc = hmac_payment_object(body);
  if (doc.is_discarded()) {
    return rejected_answer("answer empty, too large or not a JSON object");
  }
  const std::string* payment_no = hmac_payment_text(doc, "paymentNo", kHmacMaxIdBytes);
  const std::string* value = hmac_payment_text(doc, name, kPayValueBytesMax);
  const auto timestamp = hmac_payment_int(doc, "timestamp");
  if (payment_no == nullptr || value == nullptr || !timestamp) {
    return rejected_answer("answer: paymentNo, " + std::string(name) +
                           " or timestamp missing or malformed");
  }
  if (!hmac_gateway_signed_by_any(config.secrets, content(*payment_no, *value, *timestamp),
                                  hmac_payment_sign(doc))) {
    return rejected_answer("answer signature does not verify");
  }
  if (!hmac_gateway_within(now_ms, *timestamp, config.window_ms)) {
    return rejected_answer("answer timestamp outside the accepted window");
  }
  return HmacAnswerFields{*payment_no, *value, *timestamp};
}

// A non-200 answer: the signed refusal's error about this payment, else a rejection.
Result<std::string> hmac_refusal_of(const HmacConfig& config, const net::Response& response,
                                    std::string_view payment_no, std::int64_t now_ms) {
  auto fields =
      hmac_verified_answer(config, response.body, "error", hmac_refusal_sign_content, now_ms);
  if (!fields.ok()) {
    return rejected_answer("HTTP status " + std::to_string(response.status) +
                           " without a signed refusal: " + fields.detail());
  }
  if (!valid_hmac_refusal_error(fields.value().value)) {
    return rejected_answer("the refusal's error is not a code");
  }
  if (fields.value().payment_no != payment_no) {
    return rejected_answer("the answer names another payment");
  }
  return std::move(fields.value().value);
}

// The gateway's side: the request's signature under any secret, then its window.
Result<void> hmac_request_verified(const json& doc, const std::string& content,
                                   std::int64_t timestamp_ms,
                                   const std::vector<std::string>& secrets, std::int64_t now_ms,
                                   std::int64_t window_ms) {
  if (!hmac_gateway_signed_by_any(secrets, content, hmac_payment_sign(doc))) {
    return reject(errc::bad_signature, "signature does not verify");
  }
  if (!hmac_gateway_within(now_ms, timestamp_ms, window_ms)) {
    return reject(errc::stale, "timestamp outside the accepted window");
  }
  return {};
}

bool hmac_printable_payment_no(std::string_view payment_no) {
  return !payment_no.empty() && payment_no.size() <= kHmacMaxIdBytes &&
         hmac_gateway_printable(payment_no);
}

}  // namespace

std::string_view to_string(HmacCloseStatus status) {
  switch (status) {
    case HmacCloseStatus::closed:
      return "closed";
    case HmacCloseStatus::paid:
      return "paid";
    case HmacCloseStatus::not_found:
      return "not_found";
  }
  return "closed";
}

std::string hmac_create_sign_content(const HmacCreateRequest& request) {
  std::string text = request.payment_no + "\n" + std::to_string(request.amount_cents) + "\n" +
                     std::to_string(request.expires_at_ms) + "\n";
  text.append(request.notify_url).append("\n").append(std::to_string(request.timestamp_ms));
  return text;
}

std::string hmac_create_answer_sign_content(std::string_view payment_no, std::string_view pay_url,
                                            std::int64_t timestamp_ms) {
  std::string text(payment_no);
  text.append("\n").append(pay_url).append("\n").append(std::to_string(timestamp_ms));
  return text;
}

std::string hmac_close_sign_content(std::string_view payment_no, std::int64_t timestamp_ms) {
  std::string text(payment_no);
  text.append("\n").append(std::to_string(timestamp_ms));
  return text;
}

std::string hmac_close_answer_sign_content(std::string_view payment_no, std::string_view status,
                                           std::int64_t timestamp_ms) {
  return hmac_create_answer_sign_content(payment_no, status, timestamp_ms);
}

std::string hmac_refusal_sign_content(std::string_view payment_no, std::string_view error,
                                      std::int64_t timestamp_ms) {
  std::string text(kHmacRefusalWord);
  text.append("\n").append(payment_no).append("\n").append(error).append("\n");
  text.append(std::to_string(timestamp_ms));
  return text;
}

std::string hmac_close_path(std::string_view payment_no) {
  return std::string(kHmacQueryPath) + codec::form_encode(payment_no) +
         std::string(kHmacClosePathSuffix);
}

std::optional<std::string> hmac_close_payment_no(std::string_view path) {
  if (path.size() <= kHmacQueryPath.size() + kHmacClosePathSuffix.size() ||
      !path.starts_with(kHmacQueryPath) || !path.ends_with(kHmacClosePathSuffix)) {
    return std::nullopt;
  }
  const auto segment = path.substr(
      kHmacQueryPath.size(), path.size() - kHmacQueryPath.size() - kHmacClosePathSuffix.size());
  if (segment.find('/') != std::string_view::npos) {
    return std::nullopt;
  }
  auto payment_no = codec::form_decode(segment);
  if (!payment_no || !hmac_printable_payment_no(*payment_no)) {
    return std::nullopt;
  }
  return payment_no;
}

bool valid_hmac_refusal_error(std::string_view error) {
  return codec::is_safe_code(error) && ((error.front() >= 'a' && error.front() <= 'z') ||
                                        (error.front() >= 'A' && error.front() <= 'Z'));
}

Result<HmacCreateRequest> hmac_create_read_request(std::string_view body,
                                                   const std::vector<std::string>& secrets,
                                                   std::int64_t now_ms, std::int64_t window_ms) {
  const json doc = hmac_payment_object(body);
  if (doc.is_discarded()) {
    return reject(errc::malformed, "body empty, too large or not a JSON object");
  }
  const std::string* payment_no = hmac_payment_text(doc, "paymentNo", kHmacMaxIdBytes);
  const std::string* notify_url = hmac_payment_text(doc, "notifyUrl", kHmacNotifyUrlBytesMax);
  const auto amount = hmac_payment_int(doc, "amountCents");
  const auto expires_at = hmac_payment_int(doc, "expiresAt");
  const auto timestamp = hmac_payment_int(doc, "timestamp");
  if (payment_no == nullptr || notify_url == nullptr || !amount || *amount <= 0 || !expires_at ||
      *expires_at < 0 || !timestamp) {
    return reject(errc::malformed,
                  "paymentNo, amountCents, expiresAt, notifyUrl or timestamp missing or malformed");
  }
  HmacCreateRequest request{*payment_no, *amount, *expires_at, *notify_url, *timestamp};
  if (auto verified = hmac_request_verified(doc, hmac_create_sign_content(request), *timestamp,
                                            secrets, now_ms, window_ms);
      !verified.ok()) {
    return std::move(verified).failure();
  }
  return request;
}

Result<HmacCloseRequest> hmac_close_read_request(std::string_view body,
                                                 const std::vector<std::string>& secrets,
                                                 std::int64_t now_ms, std::int64_t window_ms) {
  const json doc = hmac_payment_object(body);
  if (doc.is_discarded()) {
    return reject(errc::malformed, "body empty, too large or not a JSON object");
  }
  const std::string* payment_no = hmac_payment_text(doc, "paymentNo", kHmacMaxIdBytes);
  const auto timestamp = hmac_payment_int(doc, "timestamp");
  if (payment_no == nullptr || !timestamp) {
    return reject(errc::malformed, "paymentNo or timestamp missing or malformed");
  }
  if (auto verified = hmac_request_verified(doc, hmac_close_sign_content(*payment_no, *timestamp),
                                            *timestamp, secrets, now_ms, window_ms);
      !verified.ok()) {
    return std::move(verified).failure();
  }
  return HmacCloseRequest{*payment_no, *timestamp};
}

std::string hmac_create_answer_body(std::string_view secret, std::string_view payment_no,
                                    std::string_view pay_url, std::int64_t now_ms) {
  const json body = {{"paymentNo", payment_no},
                     {"payUrl", pay_url},
                     {"timestamp", now_ms},
                     {"sign", hmac_gateway_sign(secret, hmac_create_answer_sign_content(
                                                            payment_no, pay_url, now_ms))}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string hmac_close_answer_body(std::string_view secret, std::string_view payment_no,
                                   HmacCloseStatus status, std::int64_t now_ms) {
  const std::string_view text = to_string(status);
  const json body = {{"paymentNo", payment_no},
                     {"status", text},
                     {"timestamp", now_ms},
                     {"sign", hmac_gateway_sign(secret, hmac_close_answer_sign_content(
                                                            payment_no, text, now_ms))}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string hmac_refusal_body(std::string_view secret, std::string_view payment_no,
                              std::string_view error, std::int64_t now_ms) {
  const json body = {
      {"paymentNo", payment_no},
      {"error", error},
      {"timestamp", now_ms},
      {"sign", hmac_gateway_sign(secret, hmac_refusal_sign_content(payment_no, error, now_ms))}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

HmacPayment::HmacPayment(HmacConfig config, net::Url gateway)
    : config_(std::move(config)), gateway_(std::move(gateway)) {
  check_hmac_gateway_secrets(config_.secrets, config_.window_ms, "hmac payment");
  gateway_.target = net::base_path(std::move(gateway_.target));
}

HmacPayment::~HmacPayment() {
  wipe_hmac_gateway_secrets(config_.secrets);
}

net::Request HmacPayment::post(std::string path, std::string body) const {
  net::Request request;
  request.method = "POST";
  request.url = gateway_;
  request.url.target = gateway_.target + path;
  request.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  request.body = std::move(body);
  return request;
}

Result<net::Request> HmacPayment::create_request(const CreateTarget& target,
                                                 std::int64_t now_ms) const {
  if (!hmac_printable_payment_no(target.payment_no) || target.amount_cents <= 0 ||
      target.notify_url.empty() || target.notify_url.size() > kHmacNotifyUrlBytesMax ||
      !hmac_gateway_printable(target.notify_url)) {
    return reject(errc::unusable, "no printable payment number, amount or notify URL to create");
  }
  const HmacCreateRequest fields{target.payment_no, target.amount_cents,
                                 std::max<std::int64_t>(target.expires_at_ms, 0), target.notify_url,
                                 now_ms};
  const json body = {
      {"paymentNo", fields.payment_no},
      {"amountCents", fields.amount_cents},
      {"expiresAt", fields.expires_at_ms},
      {"notifyUrl", fields.notify_url},
      {"timestamp", fields.timestamp_ms},
      {"sign", hmac_gateway_sign(config_.secrets.front(), hmac_create_sign_content(fields))}};
  return post(std::string(kHmacCreatePath), body.dump());
}

Result<CreateAnswer> HmacPayment::create_answer(const CreateTarget& target,
                                                const net::Response& response,
                                                std::int64_t now_ms) const {
  if (response.status != 200) {
    auto refusal = hmac_refusal_of(config_, response, target.payment_no, now_ms);
    if (!refusal.ok()) {
      return std::move(refusal).failure();
    }
    return CreateAnswer{false, std::move(refusal).value(), PayKind::url, {}, {}, {}};
  }
  auto fields = hmac_verified_answer(config_, response.body, "payUrl",
                                     hmac_create_answer_sign_content, now_ms);
  if (!fields.ok()) {
    return std::move(fields).failure();
  }
  if (fields.value().payment_no != target.payment_no) {
    return rejected_answer("the answer names another payment");
  }
  if (!valid_pay_value(fields.value().value)) {
    return rejected_answer("payUrl is not a pay value");
  }
  return CreateAnswer{true, {}, PayKind::url, "payUrl", std::move(fields.value().value), {}};
}

Result<net::Request> HmacPayment::close_request(const CloseTarget& target,
                                                std::int64_t now_ms) const {
  if (!hmac_printable_payment_no(target.payment_no)) {
    return reject(errc::unusable, "no printable payment number to close");
  }
  const json body = {
      {"paymentNo", target.payment_no},
      {"timestamp", now_ms},
      {"sign", hmac_gateway_sign(config_.secrets.front(),
                                 hmac_close_sign_content(target.payment_no, now_ms))}};
  return post(hmac_close_path(target.payment_no), body.dump());
}

Result<CloseAnswer> HmacPayment::close_answer(const CloseTarget& target,
                                              const net::Response& response,
                                              std::int64_t now_ms) const {
  if (response.status != 200) {
    auto refusal = hmac_refusal_of(config_, response, target.payment_no, now_ms);
    if (!refusal.ok()) {
      return std::move(refusal).failure();
    }
    return CloseAnswer{CloseState::refused, std::move(refusal).value()};
  }
  auto fields = hmac_verified_answer(config_, response.body, "status",
                                     hmac_close_answer_sign_content, now_ms);
  if (!fields.ok()) {
    return std::move(fields).failure();
  }
  if (fields.value().payment_no != target.payment_no) {
    return rejected_answer("the answer names another payment");
  }
  const std::string& status = fields.value().value;
  if (status == to_string(HmacCloseStatus::paid)) {
    return CloseAnswer{CloseState::paid, status};
  }
  if (status == to_string(HmacCloseStatus::closed) ||
      status == to_string(HmacCloseStatus::not_found)) {
    return CloseAnswer{CloseState::closed, status};
  }
  return rejected_answer("answer: status is not closed, paid or not_found");
}

}  // namespace seatflow::channels

// hmac refund: the signed request and answer bodies of both sides, and the answer's checks.
#include "channels/hmac/hmac_refund.hpp"

#include <utility>

#include <nlohmann/json.hpp>

#include "channels/hmac/hmac_gateway_mac.hpp"
#include "codec/crypto.hpp"
#include "codec/json_fields.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

constexpr std::string_view kSucceeded = "succeeded";
constexpr std::string_view kRefused = "refused";

// The fields both bodies share; the reason why not in `why`.
std::optional<HmacRefundRequest> read_common(const json& doc, std::string& why) {
  const std::string* refund_no = codec::json_string(doc, "refundNo", kRefundNoBytesMax);
  const std::string* payment_no = codec::json_string(doc, "paymentNo", kHmacMaxIdBytes);
  const json* amount = codec::json_member(doc, "amountCents");
  const json* timestamp = codec::json_member(doc, "timestamp");
  // 0 and below are refused, so they stand for "absent" (GCC 12 misreads optional ternaries).
  const std::int64_t amount_value = amount == nullptr ? 0 : codec::json_int64(*amount).value_or(0);
  const std::optional<std::int64_t> timestamp_value =
      timestamp == nullptr ? std::optional<std::int64_t>() : codec::json_int64(*timestamp);
  if (refund_no == nullptr || !valid_refund_no(*refund_no)) {
    why = "refundNo missing or not a refund number";
  } else if (payment_no == nullptr || payment_no->empty() || !hmac_gateway_printable(*payment_no)) {
    why = "paymentNo missing, empty or not printable";
  } else if (amount_value <= 0) {
    why = "amountCents missing or not a positive integer";
  } else if (!timestamp_value) {
    why = "timestamp missing or not an integer";
  } else {
    return HmacRefundRequest{*refund_no, *payment_no, amount_value, *timestamp_value};
  }
  return std::nullopt;
}

}  // namespace

std::string hmac_refund_request_canonical(const HmacRefundRequest& request) {
  return request.refund_no + "\n" + request.payment_no + "\n" +
         std::to_string(request.amount_cents) + "\n" + std::to_string(request.timestamp_ms);
}

std::string hmac_refund_answer_canonical(const HmacRefundRequest& request, std::string_view status,
                                         std::string_view reason, std::int64_t timestamp_ms) {
  std::string text = request.refund_no + "\n" + request.payment_no + "\n" +
                     std::to_string(request.amount_cents) + "\n";
  text.append(status).append("\n").append(reason).append("\n");
  text.append(std::to_string(timestamp_ms));
  return text;
}

Result<HmacRefundRequest> hmac_refund_read_request(std::string_view body,
                                                   const std::vector<std::string>& secrets,
                                                   std::int64_t now_ms, std::int64_t window_ms) {
  if (body.size() > kHmacRefundBodyBytesMax) {
    return reject(errc::malformed, "body too large");
  }
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return reject(errc::malformed, "body is not a JSON object");
  }
  std::string why;
  auto request = read_common(doc, why);
  if (!request) {
    return reject(errc::malformed, std::move(why));
  }
  if (!hmac_gateway_signed_by_any(secrets, hmac_refund_request_canonical(*request),
                                  codec::json_string(doc, "sign", 2 * codec::kHmacSha256Bytes))) {
    return reject(errc::bad_signature, "signature does not verify");
  }
  if (!hmac_gateway_within(now_ms, request->timestamp_ms, window_ms)) {
    return reject(errc::stale, "timestamp outside the accepted window");
  }
  return std::move(*request);
}

std::string hmac_refund_answer_body(std::string_view secret, const HmacRefundRequest& request,
                                    bool succeeded, std::string_view reason, std::int64_t now_ms) {
  const std::string_view status = succeeded ? kSucceeded : kRefused;
  const json body = {{"refundNo", request.refund_no},
                     {"paymentNo", request.payment_no},
                     {"amountCents", request.amount_cents},
                     {"status", status},
                     {"reason", reason},
                     {"timestamp", now_ms},
                     {"sign", hmac_gateway_sign(secret, hmac_refund_answer_canonical(
                                                            request, status, reason, now_ms))}};
  return body.dump();
}

HmacRefund::HmacRefund(HmacConfig config, net::Url gateway)
    : config_(std::move(config)), gateway_(std::move(gateway)) {
  check_hmac_gateway_secrets(config_.secrets, config_.window_ms, "hmac refund");
  gateway_.target = net::base_path(std::move(gateway_.target));
}

HmacRefund::~HmacRefund() {
  wipe_hmac_gateway_secrets(config_.secrets);
}

Result<net::Request> HmacRefund::refund_request(const RefundTarget& target,
                                                std::int64_t now_ms) const {
  const HmacRefundRequest fields{target.refund_no, target.payment_no, target.amount_cents, now_ms};
  const json body = {
      {"refundNo", fields.refund_no},
      {"paymentNo", fields.payment_no},
      {"amountCents", fields.amount_cents},
      {"timestamp", fields.timestamp_ms},
      {"sign", hmac_gateway_sign(config_.secrets.front(), hmac_refund_request_canonical(fields))}};
  net::Request request;
  request.method = "POST";
  request.url = gateway_;
  request.url.target = gateway_.target + std::string(kHmacRefundPath);
  request.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  request.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return request;
}

Result<RefundAnswer> HmacRefund::refund_answer(const RefundTarget& target,
                                               const net::Response& response,
                                               std::int64_t now_ms) const {
  if (response.status != 200) {
    return rejected_answer("unexpected HTTP status " + std::to_string(response.status));
  }
  if (response.body.empty() || response.body.size() > kHmacRefundBodyBytesMax) {
    return rejected_answer("answer empty or too large");
  }
  const json doc = json::parse(response.body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("answer is not a JSON object");
  }
  std::string why;
  const auto fields = read_common(doc, why);
  const std::string* status = codec::json_string(doc, "status", kRefundReasonBytesMax);
  const std::string* reason = codec::json_string(doc, "reason", kRefundReasonBytesMax);
  if (!fields) {
    return rejected_answer("answer: " + why);
  }
  if (status == nullptr || (*status != kSucceeded && *status != kRefused)) {
    return rejected_answer("answer: status missing or neither succeeded nor refused");
  }
  if (reason == nullptr || !hmac_gateway_printable(*reason)) {
    return rejected_answer("answer: reason missing, too long or not printable");
  }
  if (!hmac_gateway_signed_by_any(
          config_.secrets,
          hmac_refund_answer_canonical(*fields, *status, *reason, fields->timestamp_ms),
          codec::json_string(doc, "sign", 2 * codec::kHmacSha256Bytes))) {
    return rejected_answer("answer signature does not verify");
  }
  if (!hmac_gateway_within(now_ms, fields->timestamp_ms, config_.window_ms)) {
    return rejected_answer("answer timestamp outside the accepted window");
  }
  if (fields->refund_no != target.refund_no || fields->payment_no != target.payment_no) {
    return rejected_answer("the answer names another refund or payment");
  }
  if (fields->amount_cents != target.amount_cents) {
    return rejected_answer("the answer's amountCents differs from the refund's");
  }
  return RefundAnswer{*status == kSucceeded ? RefundState::succeeded : RefundState::refused,
                      bounded_reason(*reason),
                      {}};
}

}  // namespace seatflow::channels

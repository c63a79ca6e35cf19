// The `standard` dialect: webhook-* headers over the shared core, then the SeatFlow event body.
#include "channels/standard/standard_channel.hpp"

#include <array>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "codec/crypto.hpp"
#include "codec/digest.hpp"
#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {

namespace {

using nlohmann::json;

constexpr std::string_view kVersionPrefix = "v1,";

// data.amountCents, data.tradeNo into `callback`.
Result<void> read_data(const json& data, domain::VerifiedCallback& callback) {
  const std::string* payment_no = codec::json_string(data, "paymentNo", codec::kMaxIdBytes);
  if (payment_no == nullptr || !codec::is_valid_id(*payment_no)) {
    return reject(RejectReason::malformed, "data.paymentNo missing or not an id");
  }
  const json* amount = codec::json_member(data, "amountCents");
  const auto amount_value = amount == nullptr ? std::nullopt : codec::json_int64(*amount);
  if (!amount_value || *amount_value < 0) {
    return reject(RejectReason::malformed, "data.amountCents is not a non-negative integer");
  }
  if (codec::json_member(data, "tradeNo") != nullptr) {
    const std::string* trade_no = codec::json_string(data, "tradeNo", codec::kMaxIdBytes);
    if (trade_no == nullptr || !codec::is_valid_id(*trade_no)) {
      return reject(RejectReason::malformed, "data.tradeNo not an id");
    }
    callback.channel_trade_no = *trade_no;
  } else if (callback.kind == domain::CallbackKind::success) {
    return reject(RejectReason::malformed, "data.tradeNo missing");
  }
  callback.payment_no = *payment_no;
  callback.amount_cents = *amount_value;
  return {};
}

}  // namespace

std::optional<std::string> standard_secret_key(std::string_view secret) {
  if (secret.starts_with(kStandardSecretPrefix)) {
    secret.remove_prefix(kStandardSecretPrefix.size());
  }
  auto key = codec::base64_decode_unpadded_ok(secret, kStandardKeyBytesMax);
  if (!key || key->empty()) {
    return std::nullopt;
  }
  return key;
}

std::vector<std::string> standard_keys(const std::vector<std::string>& secrets) {
  std::vector<std::string> keys;
  keys.reserve(secrets.size());
  for (std::size_t i = 0; i < secrets.size(); ++i) {
    auto key = standard_secret_key(secrets[i]);
    if (!key) {
      throw std::invalid_argument("standard channel: secret " + std::to_string(i + 1) +
                                  " is not whsec_ followed by base64");
    }
    keys.push_back(std::move(*key));
  }
  return keys;
}

Result<void> verify_standard_signature(const TimestampedHmac& keys, std::string_view id,
                                       std::string_view timestamp,
                                       std::string_view signature_header, std::string_view body,
                                       std::int64_t now_ms, bool freshness_waived) {
  const auto entries = split_signature_entries(signature_header, ' ');
  if (!entries) {
    return reject(RejectReason::malformed, "webhook-signature too long or has too many entries");
  }
  const auto seconds = parse_unix_seconds(timestamp);
  if (!seconds) {
    return reject(RejectReason::bad_signature, "webhook-timestamp is not unix seconds");
  }
  std::vector<std::string> candidates;
  for (const auto entry : *entries) {
    if (!entry.starts_with(kVersionPrefix)) {
      continue;
    }
    // A v1 whose base64 is broken cannot match; it is skipped, the other entries still count.
    auto mac = codec::base64_decode(entry.substr(kVersionPrefix.size()), codec::kHmacSha256Bytes);
    if (mac && mac->size() == codec::kHmacSha256Bytes) {
      candidates.push_back(std::move(*mac));
    }
  }
  const std::array<std::string_view, 5> pieces{id, codec::kDot, timestamp, codec::kDot, body};
  return keys.check(TimestampedMessage{*seconds, pieces, candidates}, now_ms, freshness_waived);
}

std::string standard_signature(const TimestampedHmac& keys, std::string_view id,
                               std::int64_t timestamp_s, std::string_view body) {
  const auto t = std::to_string(timestamp_s);
  const std::array<std::string_view, 5> pieces{id, codec::kDot, t, codec::kDot, body};
  return std::string(kVersionPrefix) + codec::base64_encode(keys.sign(pieces));
}

Result<domain::VerifiedCallback> standard_callback_from_body(std::string_view body,
                                                             std::string_view webhook_id) {
  if (!codec::is_valid_id(webhook_id)) {
    return reject(RejectReason::malformed, "webhook-id too long or has control characters");
  }
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return reject(RejectReason::malformed, "body is not a JSON object");
  }
  const std::string* type = codec::json_string(doc, "type", kStandardFieldBytesMax);
  if (type == nullptr) {
    return reject(RejectReason::malformed, "type missing or not a short string");
  }
  domain::VerifiedCallback callback;
  if (*type == kStandardSucceeded) {
    callback.kind = domain::CallbackKind::success;
  } else if (*type == kStandardFailed) {
    callback.kind = domain::CallbackKind::failure;
  } else {
    return reject(RejectReason::unhandled_event, "event type not handled; acknowledged");
  }
  const json* data = codec::json_object(doc, "data");
  if (data == nullptr) {
    return reject(RejectReason::malformed, "data missing or not an object");
  }
  if (auto checked = read_data(*data, callback); !checked.ok()) {
    return std::move(checked).failure();
  }
  callback.callback_id = std::string(webhook_id);
  callback.channel = domain::Channel::standard;
  callback.payload_sha256 = codec::business_digest(callback);
  return callback;
}

std::string standard_event_body(const StandardEvent& event) {
  json data = {{"paymentNo", event.payment_no}, {"amountCents", event.amount_cents}};
  if (!event.trade_no.empty()) {
    data["tradeNo"] = event.trade_no;
  }
  const json body = {{"type", event.type}, {"timestamp", event.timestamp_s}, {"data", data}};
  return body.dump();
}

StandardChannel::StandardChannel(const StandardConfig& config)
    : keys_(standard_keys(config.secrets), config.window_ms) {}

Result<domain::VerifiedCallback> StandardChannel::verify(const InboundRequest& request) const {
  if (request.body.empty() || request.body.size() > kGatewayBodyBytesMax) {
    return reject(RejectReason::malformed, "body empty or too large");
  }
  const auto id = codec::header_value(request.headers, kStandardIdHeader);
  const auto timestamp = codec::header_value(request.headers, kStandardTimestampHeader);
  const auto signature = codec::header_value(request.headers, kStandardSignatureHeader);
  if (!id || !timestamp || !signature) {
    return reject(RejectReason::bad_signature,
                  "webhook-id, webhook-timestamp or webhook-signature missing");
  }
  if (auto checked = verify_standard_signature(keys_, *id, *timestamp, *signature, request.body,
                                               request.now_ms, request.freshness_waived);
      !checked.ok()) {
    return std::move(checked).failure();
  }
  return authentic(standard_callback_from_body(request.body, *id));
}

std::string StandardChannel::failure_body(std::string_view message) const {
  return std::string(message);
}

}  // namespace seatflow::channels

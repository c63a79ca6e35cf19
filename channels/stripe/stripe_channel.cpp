// The `stripe` dialect: Stripe-Signature parsing over the shared core, then the PaymentIntent
// event.
#include "channels/stripe/stripe_channel.hpp"

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

// One id member: present, a string and a valid id (is_valid_id), else nullptr.
const std::string* id_member(const json& object, const char* name) {
  const std::string* text = codec::json_string(object, name, codec::kMaxIdBytes);
  return text != nullptr && codec::is_valid_id(*text) ? text : nullptr;
}

// The PaymentIntent's fields into `callback`; a rejection naming the field when one is wrong.
Result<void> read_intent(const json& intent, std::string_view currency,
                         domain::VerifiedCallback& callback) {
  const json* metadata = codec::json_object(intent, "metadata");
  const std::string* payment_no = metadata == nullptr ? nullptr : id_member(*metadata, "paymentNo");
  if (payment_no == nullptr) {
    return reject(RejectReason::malformed, "data.object.metadata.paymentNo missing or not an id");
  }
  const std::string* intent_id = id_member(intent, "id");
  if (intent_id == nullptr) {
    return reject(RejectReason::malformed, "data.object.id missing or not an id");
  }
  const json* amount = codec::json_member(intent, "amount");
  const auto amount_value = amount == nullptr ? std::nullopt : codec::json_int64(*amount);
  if (!amount_value || *amount_value < 0) {
    return reject(RejectReason::malformed, "data.object.amount is not a non-negative integer");
  }
  const std::string* event_currency = codec::json_string(intent, "currency", kStripeFieldBytesMax);
  if (event_currency == nullptr || !codec::iequals_ascii(*event_currency, currency)) {
    return reject(RejectReason::malformed, "data.object.currency is not the configured currency");
  }
  callback.payment_no = *payment_no;
  callback.channel_trade_no = *intent_id;
  callback.amount_cents = *amount_value;
  return {};
}

}  // namespace

Result<void> verify_stripe_signature(const TimestampedHmac& keys, std::string_view header,
                                     std::string_view body, std::int64_t now_ms,
                                     bool freshness_waived) {
  const auto entries = split_signature_entries(header, ',');
  if (!entries) {
    return reject(RejectReason::malformed, "Stripe-Signature too long or has too many entries");
  }
  std::optional<std::string_view> timestamp;
  std::vector<std::string> candidates;
  for (const auto entry : *entries) {
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    const auto scheme = entry.substr(0, eq);
    const auto value = entry.substr(eq + 1);
    if (scheme == "t") {
      if (timestamp) {
        return reject(RejectReason::bad_signature, "Stripe-Signature has more than one t");
      }
      timestamp = value;
    } else if (scheme == "v1") {
      // A v1 that is not hex cannot match; like stripe-go, it is skipped, not fatal.
      if (auto mac = codec::hex_decode(value); mac && mac->size() == codec::kHmacSha256Bytes) {
        candidates.push_back(std::move(*mac));
      }
    }
  }
  const auto seconds = timestamp ? parse_unix_seconds(*timestamp) : std::nullopt;
  if (!seconds) {
    return reject(RejectReason::bad_signature, "Stripe-Signature has no valid t");
  }
  const std::array<std::string_view, 3> pieces{*timestamp, codec::kDot, body};
  return keys.check(TimestampedMessage{*seconds, pieces, candidates}, now_ms, freshness_waived);
}

std::string stripe_signature_header(const TimestampedHmac& keys, std::int64_t timestamp_s,
                                    std::string_view body) {
  const auto t = std::to_string(timestamp_s);
  const std::array<std::string_view, 3> pieces{t, codec::kDot, body};
  return "t=" + t + ",v1=" + codec::to_lower_hex(keys.sign(pieces));
}

Result<domain::VerifiedCallback> stripe_callback_from_event(std::string_view body,
                                                            std::string_view currency) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return reject(RejectReason::malformed, "body is not a JSON object");
  }
  const std::string* id = id_member(doc, "id");
  if (id == nullptr) {
    return reject(RejectReason::malformed, "event id missing, too long or has control characters");
  }
  const std::string* type = codec::json_string(doc, "type", kStripeFieldBytesMax);
  if (type == nullptr) {
    return reject(RejectReason::malformed, "event type missing or not a short string");
  }
  domain::VerifiedCallback callback;
  if (*type == kStripeSucceeded) {
    callback.kind = domain::CallbackKind::success;
  } else if (*type == kStripeFailed) {
    callback.kind = domain::CallbackKind::failure;
  } else {
    return reject(RejectReason::unhandled_event, "event type not handled; acknowledged");
  }
  const json* data = codec::json_object(doc, "data");
  const json* intent = data == nullptr ? nullptr : codec::json_object(*data, "object");
  if (intent == nullptr) {
    return reject(RejectReason::malformed, "data.object missing or not an object");
  }
  if (auto checked = read_intent(*intent, currency, callback); !checked.ok()) {
    return std::move(checked).failure();
  }
  callback.callback_id = *id;
  callback.channel = domain::Channel::stripe;
  callback.payload_sha256 = codec::business_digest(callback);
  return callback;
}

std::string stripe_event_body(const StripeEvent& event) {
  const bool succeeded = event.type == kStripeSucceeded;
  const json intent = {
      {"id", event.payment_intent_id},
      {"object", "payment_intent"},
      {"amount", event.amount},
      {"currency", event.currency},
      {"status", succeeded ? "succeeded" : "requires_payment_method"},
      {"metadata", {{"paymentNo", event.payment_no}}},
  };
  const json body = {
      {"id", event.id},
      {"object", "event"},
      {"api_version", "2024-06-20"},
      {"created", event.created_s},
      {"livemode", false},
      {"type", event.type},
      {"data", {{"object", intent}}},
  };
  return body.dump();
}

StripeChannel::StripeChannel(StripeConfig config)
    : keys_(std::move(config.secrets), config.window_ms), currency_(std::move(config.currency)) {
  if (currency_.empty() || currency_.size() > kStripeFieldBytesMax) {
    throw std::invalid_argument("stripe channel: empty or overlong currency");
  }
}

Result<domain::VerifiedCallback> StripeChannel::verify(const InboundRequest& request) const {
  if (request.body.empty() || request.body.size() > kGatewayBodyBytesMax) {
    return reject(RejectReason::malformed, "body empty or too large");
  }
  const auto header = codec::header_value(request.headers, kStripeSignatureHeader);
  if (!header) {
    return reject(RejectReason::bad_signature, "Stripe-Signature missing");
  }
  if (auto checked = verify_stripe_signature(keys_, *header, request.body, request.now_ms,
                                             request.freshness_waived);
      !checked.ok()) {
    return std::move(checked).failure();
  }
  return authentic(stripe_callback_from_event(request.body, currency_));
}

std::string StripeChannel::failure_body(std::string_view message) const {
  const json body = {{"error", std::string(message)}};
  // Replace rather than throw should a message ever hold invalid UTF-8.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace seatflow::channels

// The `wechat` dialect: header signature over timestamp\nnonce\nbody\n, then AES-256-GCM resource.
#include "channels/wechat/wechat_channel.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "channels/timestamped_hmac.hpp"
#include "codec/digest.hpp"
#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {

namespace {

using nlohmann::json;

// {"code":"SUCCESS","message":"成功"}, the message spelled as UTF-8 bytes whatever the source
// charset.
constexpr std::string_view kAckBody =
    "{\"code\":\"SUCCESS\",\"message\":\"\xE6\x88\x90\xE5\x8A\x9F\"}";

// The four signature headers, as sent (views into the request's header map).
struct SignedHeaders {
  std::string_view timestamp;
  std::string_view nonce;
  std::string_view signature;
  std::string_view serial;
};

std::optional<std::string_view> header(const codec::Headers* headers, std::string_view name) {
  const auto value = codec::header_value(headers, name);
  if (!value || value->size() > kWechatMaxHeaderBytes) {
    return std::nullopt;
  }
  return value;
}

Result<SignedHeaders> read_headers(const codec::Headers* headers) {
  const auto timestamp = header(headers, kWechatTimestampHeader);
  const auto nonce = header(headers, kWechatNonceHeader);
  const auto signature = header(headers, kWechatSignatureHeader);
  const auto serial = header(headers, kWechatSerialHeader);
  if (!timestamp || !nonce || !signature || !serial) {
    return reject(RejectReason::bad_signature,
                  "Wechatpay-Timestamp/-Nonce/-Signature/-Serial missing, empty or too long");
  }
  return SignedHeaders{*timestamp, *nonce, *signature, *serial};
}

domain::CallbackKind wechat_kind_of(std::string_view trade_state) {
  if (trade_state == "SUCCESS") {
    return domain::CallbackKind::success;
  }
  if (trade_state == "PAYERROR" || trade_state == "CLOSED" || trade_state == "REVOKED") {
    return domain::CallbackKind::failure;
  }
  // NOTPAY, USERPAYING, REFUND and anything WeChat adds later: acknowledged, changes nothing.
  return domain::CallbackKind::other;
}

// amount.total in fen: a non-negative JSON integer.
std::optional<std::int64_t> amount_total(const json& transaction) {
  const auto amount = transaction.find("amount");
  if (amount == transaction.end() || !amount->is_object()) {
    return std::nullopt;
  }
  const auto total = amount->find("total");
  if (total == amount->end()) {
    return std::nullopt;
  }
  if (total->is_number_unsigned()) {
    const auto value = total->get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(value);
  }
  if (total->is_number_integer() && total->get<std::int64_t>() >= 0) {
    return total->get<std::int64_t>();
  }
  return std::nullopt;
}

// transaction_id and amount.total: required for a success, checked whenever present.
Result<void> read_wechat_trade(const json& doc, domain::VerifiedCallback& callback) {
  const bool success = callback.kind == domain::CallbackKind::success;
  if (doc.contains("transaction_id")) {
    const std::string* transaction_id =
        codec::json_string(doc, "transaction_id", codec::kMaxIdBytes);
    if (transaction_id == nullptr || !codec::is_valid_id(*transaction_id)) {
      return reject(RejectReason::malformed, "transaction_id not a valid id");
    }
    callback.channel_trade_no = *transaction_id;
  } else if (success) {
    return reject(RejectReason::malformed, "transaction_id missing");
  }
  if (doc.contains("amount")) {
    callback.amount_cents = amount_total(doc);
    if (!callback.amount_cents) {
      return reject(RejectReason::malformed, "amount.total is not a non-negative integer");
    }
  } else if (success) {
    return reject(RejectReason::malformed, "amount missing");
  }
  return {};
}

EVP_PKEY* key_for(const WechatPlatformKeys& keys, std::string_view serial) {
  for (const auto& [name, key] : keys) {
    if (name == serial) {
      return key.get();
    }
  }
  return nullptr;
}

}  // namespace

Result<WechatNotification> parse_wechat_notification(std::string_view body) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return reject(RejectReason::malformed, "body is not a JSON object");
  }
  const std::string* id = codec::json_string(doc, "id", codec::kMaxIdBytes);
  if (id == nullptr || !codec::is_valid_id(*id)) {
    return reject(RejectReason::malformed, "id missing, too long or has control characters");
  }
  const auto resource = doc.find("resource");
  if (resource == doc.end() || !resource->is_object()) {
    return reject(RejectReason::malformed, "resource missing or not an object");
  }
  const std::string* algorithm = codec::json_string(*resource, "algorithm", kWechatMaxFieldBytes);
  if (algorithm == nullptr || *algorithm != "AEAD_AES_256_GCM") {
    return reject(RejectReason::malformed, "resource.algorithm is not AEAD_AES_256_GCM");
  }
  const std::string* ciphertext =
      codec::json_string(*resource, "ciphertext", kWechatMaxCiphertextBytes);
  const std::string* nonce = codec::json_string(*resource, "nonce", codec::kAesGcmMaxNonceBytes);
  if (ciphertext == nullptr || ciphertext->empty() || nonce == nullptr || nonce->empty()) {
    return reject(RejectReason::malformed, "resource.ciphertext or nonce missing or too long");
  }
  std::string associated_data;
  const auto aad_member = resource->find("associated_data");
  if (aad_member != resource->end() && !aad_member->is_null()) {
    const std::string* aad = codec::json_string(*resource, "associated_data", kWechatMaxFieldBytes);
    if (aad == nullptr) {
      return reject(RejectReason::malformed, "resource.associated_data not a short string");
    }
    associated_data = *aad;
  }
  return WechatNotification{*id, *ciphertext, *nonce, std::move(associated_data)};
}

Result<domain::VerifiedCallback> parse_wechat_transaction(std::string_view plaintext,
                                                          std::string_view expected_mchid) {
  const json doc = json::parse(plaintext, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return reject(RejectReason::malformed, "decrypted resource is not a JSON object");
  }
  const std::string* mchid = codec::json_string(doc, "mchid", kWechatMaxFieldBytes);
  if (mchid == nullptr || *mchid != expected_mchid) {
    return reject(RejectReason::malformed, "mchid missing or not this merchant's");
  }
  const std::string* out_trade_no = codec::json_string(doc, "out_trade_no", codec::kMaxIdBytes);
  if (out_trade_no == nullptr || !codec::is_valid_id(*out_trade_no)) {
    return reject(RejectReason::malformed,
                  "out_trade_no missing, too long or has control characters");
  }
  domain::VerifiedCallback callback;
  callback.payment_no = *out_trade_no;
  callback.channel = domain::Channel::wechat;
  const std::string* trade_state = codec::json_string(doc, "trade_state", kWechatMaxFieldBytes);
  const std::string* refund_status = codec::json_string(doc, "refund_status", kWechatMaxFieldBytes);
  if (trade_state != nullptr && !trade_state->empty()) {
    callback.kind = wechat_kind_of(*trade_state);
  } else if (trade_state == nullptr && refund_status != nullptr && !refund_status->empty()) {
    // A refund notification (REFUND.SUCCESS/ABNORMAL/CLOSED) sent to this URL: refunds are moved
    // by the orders API, so it is acknowledged and logged, and changes nothing. Answering it with
    // an error would only make WeChat retry it for a day.
    callback.kind = domain::CallbackKind::other;
  } else {
    return reject(RejectReason::malformed, "trade_state missing or not a short string");
  }
  if (auto checked = read_wechat_trade(doc, callback); !checked.ok()) {
    return std::move(checked).failure();
  }
  return callback;
}

Result<domain::VerifiedCallback> wechat_callback_from_body(std::string_view body,
                                                           const WechatRules& rules) {
  auto parsed = parse_wechat_notification(body);
  if (!parsed.ok()) {
    return std::move(parsed).failure();
  }
  auto& notification = parsed.value();
  // A body whose signature verified but whose resource cannot be opened is the gateway's (or a
  // key configuration) problem, not a forgery: 400 malformed, so it shows as rejected_param.
  const auto sealed = codec::base64_decode(notification.ciphertext, kWechatMaxCiphertextBytes);
  if (!sealed) {
    return reject(RejectReason::malformed, "resource.ciphertext is not base64");
  }
  const auto plaintext = codec::aes256gcm_open(rules.apiv3_key, notification.nonce,
                                               notification.associated_data, *sealed);
  if (!plaintext) {
    return reject(RejectReason::malformed, "resource cannot be decrypted with the APIv3 key");
  }
  auto transaction = parse_wechat_transaction(*plaintext, rules.mchid);
  if (!transaction.ok()) {
    return std::move(transaction).failure();
  }
  auto& callback = transaction.value();
  callback.callback_id = std::move(notification.id);
  callback.payload_sha256 = codec::business_digest(callback);
  return std::move(callback);
}

bool valid_platform_keys(const WechatPlatformKeys& keys) {
  if (keys.empty()) {
    return false;
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string& serial = keys[i].first;
    const bool repeated = std::any_of(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(i),
                                      [&](const auto& other) { return other.first == serial; });
    if (serial.empty() || !keys[i].second || repeated) {
      return false;
    }
  }
  return true;
}

Result<void> verify_wechat_signature(const WechatPlatformKeys& keys, const codec::Headers* headers,
                                     std::string_view body, std::int64_t now_ms,
                                     std::int64_t window_ms, bool freshness_waived) {
  const auto read = read_headers(headers);
  if (!read.ok()) {
    return read.failure();
  }
  const auto& signed_headers = read.value();
  if (signed_headers.signature.starts_with(kWechatProbePrefix)) {
    return reject(RejectReason::bad_signature, "probe signature (WECHATPAY/SIGNTEST/) refused");
  }
  const auto seconds = parse_unix_seconds(signed_headers.timestamp);
  if (!seconds) {
    return reject(RejectReason::bad_signature, "Wechatpay-Timestamp is not unix seconds");
  }
  EVP_PKEY* key = key_for(keys, signed_headers.serial);
  if (key == nullptr) {
    return reject(RejectReason::bad_signature, "Wechatpay-Serial names no configured key");
  }
  const auto signature = codec::base64_decode(signed_headers.signature, kWechatMaxSignatureBytes);
  if (!signature) {
    return reject(RejectReason::bad_signature, "Wechatpay-Signature is not base64");
  }
  constexpr std::string_view kNewline = "\n";
  const std::array<std::string_view, 6> message{
      signed_headers.timestamp, kNewline, signed_headers.nonce, kNewline, body, kNewline};
  if (!codec::rsa_sha256_verify(key, message, *signature)) {
    return reject(RejectReason::bad_signature, "signature does not verify");
  }
  // The clock after the signature: only an authentic message is called stale (SPEC §14).
  if (!freshness_waived && !within_window_s(now_ms, *seconds, window_ms)) {
    return reject_stale(now_ms, *seconds * 1000);
  }
  return {};
}

WechatChannel::WechatChannel(WechatRules rules, WechatPlatformKeys keys, std::int64_t window_ms)
    : rules_(std::move(rules)), keys_(std::move(keys)), window_ms_(window_ms) {
  if (rules_.mchid.empty()) {
    throw std::invalid_argument("wechat channel: empty mchid");
  }
  if (rules_.apiv3_key.size() != codec::kAesGcmKeyBytes) {
    throw std::invalid_argument("wechat channel: the APIv3 key must be 32 bytes");
  }
  if (window_ms_ < 0) {
    throw std::invalid_argument("wechat channel: a negative window");
  }
  if (!valid_platform_keys(keys_)) {
    throw std::invalid_argument("wechat channel: no key, an empty or repeated serial, a null key");
  }
}

Result<domain::VerifiedCallback> WechatChannel::verify(const InboundRequest& request) const {
  if (request.body.empty() || request.body.size() > kGatewayBodyBytesMax) {
    return reject(RejectReason::malformed, "body empty or too large");
  }
  if (auto checked = verify_wechat_signature(keys_, request.headers, request.body, request.now_ms,
                                             window_ms_, request.freshness_waived);
      !checked.ok()) {
    return std::move(checked).failure();
  }
  return authentic(wechat_callback_from_body(request.body, rules_));
}

std::string_view WechatChannel::ack_body() const {
  return kAckBody;
}

std::string WechatChannel::failure_body(std::string_view message) const {
  const json body = {{"code", "FAIL"}, {"message", std::string(message)}};
  // Replace rather than throw should a message ever hold invalid UTF-8.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<std::unique_ptr<Channel>> make_wechat_channel(const WechatConfig& config) {
  const auto failed = [](std::string text) { return reject(errc::bad_config, std::move(text)); };
  if (config.mchid.empty()) {
    return failed("wechat mchid is empty");
  }
  if (config.apiv3_key.size() != codec::kAesGcmKeyBytes) {
    return failed("the APIv3 key is " + std::to_string(config.apiv3_key.size()) +
                  " bytes, it must be exactly 32");
  }
  if (config.platform_keys.empty()) {
    return failed("no platform key configured");
  }
  WechatPlatformKeys keys;
  for (const auto& entry : config.platform_keys) {
    const bool repeated = std::any_of(keys.begin(), keys.end(),
                                      [&](const auto& key) { return key.first == entry.serial; });
    if (entry.serial.empty() || entry.serial.size() > codec::kMaxIdBytes || repeated) {
      return failed("platform key serial '" + entry.serial + "' is empty, too long or repeated");
    }
    auto key = codec::load_public_key_file(entry.pem_path);
    if (!key.ok()) {
      return failed("platform key for serial '" + entry.serial + "': " + key.detail());
    }
    keys.emplace_back(entry.serial, std::move(key).value());
  }
  return std::unique_ptr<Channel>(std::make_unique<WechatChannel>(
      WechatRules{config.mchid, config.apiv3_key}, std::move(keys), config.window_ms));
}

}  // namespace seatflow::channels

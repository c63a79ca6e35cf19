// The `alipay` dialect: hand-split form body, RSA2 over the sorted params, then content checks.
#include "channels/alipay/alipay_channel.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "codec/bill_text.hpp"
#include "codec/digest.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {

namespace {

// At most this many integer digits: 15 digits of yuan in cents stay far below INT64_MAX.
constexpr std::size_t kMaxYuanDigits = 15;

bool valid_key(std::string_view key) {
  if (key.empty() || key.size() > kAlipayMaxKeyBytes) {
    return false;
  }
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// One "k=v" segment, URL-decoded; `detail` says what is wrong (never the value).
std::optional<FormParam> parse_pair(std::string_view segment, std::string& detail) {
  const auto eq = segment.find('=');
  if (eq == std::string_view::npos) {
    detail = "a form field has no '='";
    return std::nullopt;
  }
  const auto raw_key = segment.substr(0, eq);
  const auto raw_value = segment.substr(eq + 1);
  if (raw_key.size() > 3 * kAlipayMaxKeyBytes || raw_value.size() > 3 * kAlipayMaxValueBytes) {
    detail = "a form field is too long";
    return std::nullopt;
  }
  auto key = codec::form_decode(raw_key);
  auto value = codec::form_decode(raw_value);
  if (!key || !value) {
    detail = "a form field has a bad %-escape";
    return std::nullopt;
  }
  if (!valid_key(*key)) {
    detail = "a form field name is empty, too long or not [A-Za-z0-9_]";
    return std::nullopt;
  }
  if (value->size() > kAlipayMaxValueBytes) {
    detail = "a form field is too long";
    return std::nullopt;
  }
  return FormParam{std::move(*key), std::move(*value)};
}

std::optional<FormCharset> charset_of(const AlipayForm& form) {
  const std::string* name = form.find("charset");
  if (name == nullptr || codec::iequals_ascii(*name, "utf-8") ||
      codec::iequals_ascii(*name, "utf8")) {
    return FormCharset::utf8;
  }
  if (codec::iequals_ascii(*name, "gbk") || codec::iequals_ascii(*name, "gb2312")) {
    return FormCharset::gbk;
  }
  return std::nullopt;
}

// Moves sign and sign_type aside; false when either appears twice.
bool take_signature_param(FormParam& param, AlipayForm& form, bool& have_sign) {
  if (param.key == "sign") {
    if (have_sign) {
      return false;
    }
    have_sign = true;
    form.sign = std::move(param.value);
    return true;
  }
  if (form.sign_type) {
    return false;
  }
  form.sign_type = std::move(param.value);
  return true;
}

// Sorts by key bytes and refuses duplicates (which value would the signature cover?).
bool sort_unique(std::vector<FormParam>& params) {
  std::sort(params.begin(), params.end(),
            [](const FormParam& a, const FormParam& b) { return a.key < b.key; });
  const auto duplicate =
      std::adjacent_find(params.begin(), params.end(),
                         [](const FormParam& a, const FormParam& b) { return a.key == b.key; });
  return duplicate == params.end();
}

// The signed values converted to UTF-8 (validated as such for a UTF-8 form), in the same order.
std::optional<std::vector<std::string>> utf8_values(const AlipayForm& form) {
  std::vector<std::string> values;
  values.reserve(form.signed_params.size());
  for (const auto& param : form.signed_params) {
    if (form.charset == FormCharset::gbk) {
      auto converted = codec::gbk_to_utf8(param.value);
      if (!converted) {
        return std::nullopt;
      }
      values.push_back(std::move(*converted));
    } else {
      if (!codec::is_valid_utf8(param.value)) {
        return std::nullopt;
      }
      values.push_back(param.value);
    }
  }
  return values;
}

domain::CallbackKind alipay_kind_of(std::string_view trade_status) {
  if (trade_status == "TRADE_SUCCESS" || trade_status == "TRADE_FINISHED") {
    return domain::CallbackKind::success;
  }
  if (trade_status == "TRADE_CLOSED") {
    return domain::CallbackKind::failure;
  }
  // WAIT_BUYER_PAY and anything Alipay adds later: acknowledged, changes nothing.
  return domain::CallbackKind::other;
}

// Read access to the UTF-8 values by key (the params are sorted, so a binary search).
class Fields {
 public:
  Fields(const AlipayForm& form, const std::vector<std::string>& values)
      : form_(form), values_(values) {}

  [[nodiscard]] const std::string* get(std::string_view key) const {
    const auto& params = form_.signed_params;
    const auto it =
        std::lower_bound(params.begin(), params.end(), key,
                         [](const FormParam& p, std::string_view k) { return p.key < k; });
    if (it == params.end() || it->key != key) {
      return nullptr;
    }
    return &values_[static_cast<std::size_t>(it - params.begin())];
  }

 private:
  const AlipayForm& form_;
  const std::vector<std::string>& values_;
};

Result<void> check_merchant(const Fields& fields, const AlipayRules& rules) {
  const std::string* app_id = fields.get("app_id");
  if (app_id == nullptr || *app_id != rules.app_id) {
    return reject(RejectReason::malformed, "app_id missing or not this merchant's");
  }
  if (!rules.seller_id.empty()) {
    const std::string* seller_id = fields.get("seller_id");
    if (seller_id == nullptr || *seller_id != rules.seller_id) {
      return reject(RejectReason::malformed, "seller_id missing or not this merchant's");
    }
  }
  return {};
}

// trade_no and total_amount: required for a success, checked whenever present.
Result<void> read_alipay_trade(const Fields& fields, domain::VerifiedCallback& callback) {
  const bool success = callback.kind == domain::CallbackKind::success;
  if (const std::string* trade_no = fields.get("trade_no")) {
    if (!codec::is_valid_id(*trade_no)) {
      return reject(RejectReason::malformed, "trade_no empty, too long or has control characters");
    }
    callback.channel_trade_no = *trade_no;
  } else if (success) {
    return reject(RejectReason::malformed, "trade_no missing");
  }
  if (const std::string* amount = fields.get("total_amount")) {
    callback.amount_cents = parse_yuan_to_cents(*amount);
    if (!callback.amount_cents) {
      return reject(RejectReason::malformed, "total_amount is not yuan with at most 2 decimals");
    }
  } else if (success) {
    return reject(RejectReason::malformed, "total_amount missing");
  }
  return {};
}

}  // namespace

const std::string* AlipayForm::find(std::string_view key) const {
  for (const auto& param : signed_params) {
    if (param.key == key) {
      return &param.value;
    }
  }
  return nullptr;
}

Result<AlipayForm> parse_alipay_form(std::string_view body) {
  if (body.empty() || body.size() > kGatewayBodyBytesMax) {
    return reject(RejectReason::malformed, "form body empty or too large");
  }
  AlipayForm form;
  bool have_sign = false;
  std::size_t count = 0;
  std::size_t start = 0;
  while (start <= body.size()) {
    const auto end = std::min(body.find('&', start), body.size());
    const auto segment = body.substr(start, end - start);
    start = end + 1;
    if (segment.empty()) {
      continue;  // "a=1&&b=2" or a trailing "&": nothing there to sign or to read
    }
    if (++count > kAlipayMaxParams) {
      return reject(RejectReason::malformed, "too many form fields");
    }
    std::string detail;
    auto param = parse_pair(segment, detail);
    if (!param) {
      return reject(RejectReason::malformed, detail);
    }
    if (param->key == "sign" || param->key == "sign_type") {
      if (!take_signature_param(*param, form, have_sign)) {
        return reject(RejectReason::malformed, "sign or sign_type appears twice");
      }
      continue;
    }
    form.signed_params.push_back(std::move(*param));
  }
  if (!sort_unique(form.signed_params)) {
    return reject(RejectReason::malformed, "a form field appears twice");
  }
  const auto charset = charset_of(form);
  if (!charset) {
    return reject(RejectReason::malformed, "charset is neither UTF-8 nor GBK");
  }
  form.charset = *charset;
  return form;
}

std::string alipay_sign_content(const AlipayForm& form) {
  std::size_t size = 0;
  for (const auto& param : form.signed_params) {
    size += param.key.size() + param.value.size() + 2;
  }
  std::string content;
  content.reserve(size);
  for (const auto& param : form.signed_params) {
    if (!content.empty()) {
      content.push_back('&');
    }
    content.append(param.key).append("=").append(param.value);
  }
  return content;
}

std::optional<std::int64_t> parse_yuan_to_cents(std::string_view text) {
  // An amount Alipay took: unsigned, at most kMaxYuanDigits yuan; exact through the codec's reader.
  if (text.empty() || text.front() == '-' || text.front() == '+' ||
      text.substr(0, text.find('.')).size() > kMaxYuanDigits) {
    return std::nullopt;
  }
  return codec::parse_decimal_units(text, 2);
}

Result<domain::VerifiedCallback> alipay_callback_from_form(const AlipayForm& form,
                                                           const AlipayRules& rules) {
  const auto values = utf8_values(form);
  if (!values) {
    return reject(RejectReason::malformed, form.charset == FormCharset::gbk
                                               ? "a form value is not valid GBK"
                                               : "a form value is not valid UTF-8");
  }
  const Fields fields(form, *values);
  if (auto checked = check_merchant(fields, rules); !checked.ok()) {
    return std::move(checked).failure();
  }
  const std::string* notify_id = fields.get("notify_id");
  const std::string* out_trade_no = fields.get("out_trade_no");
  if (notify_id == nullptr || !codec::is_valid_id(*notify_id)) {
    return reject(RejectReason::malformed, "notify_id missing, too long or has control characters");
  }
  if (out_trade_no == nullptr || !codec::is_valid_id(*out_trade_no)) {
    return reject(RejectReason::malformed,
                  "out_trade_no missing, too long or has control characters");
  }
  const std::string* trade_status = fields.get("trade_status");
  if (trade_status == nullptr || trade_status->empty()) {
    return reject(RejectReason::malformed, "trade_status missing");
  }
  domain::VerifiedCallback callback;
  callback.callback_id = *notify_id;
  callback.payment_no = *out_trade_no;
  callback.channel = domain::Channel::alipay;
  callback.kind = alipay_kind_of(*trade_status);
  if (auto checked = read_alipay_trade(fields, callback); !checked.ok()) {
    return std::move(checked).failure();
  }
  callback.payload_sha256 = codec::business_digest(callback);
  return callback;
}

AlipayChannel::AlipayChannel(AlipayRules rules, codec::SharedKey public_key)
    : rules_(std::move(rules)), public_key_(std::move(public_key)) {
  if (!public_key_) {
    throw std::invalid_argument("alipay channel: no public key");
  }
  if (rules_.app_id.empty()) {
    throw std::invalid_argument("alipay channel: empty app id");
  }
}

Result<domain::VerifiedCallback> AlipayChannel::verify(const InboundRequest& request) const {
  auto parsed = parse_alipay_form(request.body);
  if (!parsed.ok()) {
    return std::move(parsed).failure();
  }
  const auto& form = parsed.value();
  if (form.sign.empty()) {
    return reject(RejectReason::bad_signature, "sign missing");
  }
  if (form.sign_type && *form.sign_type != "RSA2") {
    return reject(RejectReason::bad_signature, "sign_type is not RSA2");
  }
  const auto signature = codec::base64_decode(form.sign, kAlipayMaxSignatureBytes);
  if (!signature) {
    return reject(RejectReason::bad_signature, "sign is not base64");
  }
  const std::string content = alipay_sign_content(form);
  const std::array<std::string_view, 1> pieces{content};
  if (!codec::rsa_sha256_verify(public_key_.get(), pieces, *signature)) {
    return reject(RejectReason::bad_signature, "signature does not verify");
  }
  return authentic(alipay_callback_from_form(form, rules_));
}

std::string AlipayChannel::failure_body(std::string_view message) const {
  std::string body = "fail: ";
  body.append(message);
  return body;
}

Result<std::unique_ptr<Channel>> make_alipay_channel(const AlipayConfig& config) {
  if (config.app_id.empty()) {
    return reject(errc::bad_config, "alipay app id is empty");
  }
  auto key = codec::load_public_key_file(config.public_key_path);
  if (!key.ok()) {
    return reject(errc::bad_config, key.detail());
  }
  // GBK forms need glibc's gconv modules; find out now rather than on the first GBK notify.
  if (codec::gbk_to_utf8("\xB2\xE2\xCA\xD4") !=
      std::optional<std::string>("\xE6\xB5\x8B\xE8\xAF\x95")) {
    return reject(errc::bad_config, "iconv on this system cannot decode GBK");
  }
  return std::unique_ptr<Channel>(std::make_unique<AlipayChannel>(
      AlipayRules{config.app_id, config.seller_id}, std::move(key).value()));
}

}  // namespace seatflow::channels

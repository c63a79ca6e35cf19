// Builds signed alipay forms and wechat notifications exactly as the gateways do (see the header).
#include "channels/gateway_signer.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "codec/text.hpp"

namespace seatflow::channels {

namespace {

using nlohmann::json;

bool names_gbk(const FormParams& params) {
  const auto it = std::find_if(params.begin(), params.end(),
                               [](const auto& p) { return p.first == "charset"; });
  return it != params.end() &&
         (codec::iequals_ascii(it->second, "gbk") || codec::iequals_ascii(it->second, "gb2312"));
}

}  // namespace

FormParams alipay_notice_params(const AlipayNotice& notice, std::int64_t now_ms) {
  FormParams params = {
      {"notify_time", codec::china_time(now_ms, false)},
      {"notify_type", "trade_status_sync"},
      {"notify_id", notice.notify_id},
      {"app_id", notice.app_id},
      {"charset", notice.charset},
      {"version", "1.0"},
      {"out_trade_no", notice.out_trade_no},
      {"trade_status", notice.trade_status},
  };
  const std::array<std::pair<const char*, const std::string*>, 3> optional_fields = {{
      {"seller_id", &notice.seller_id},
      {"trade_no", &notice.trade_no},
      {"total_amount", &notice.total_amount},
  }};
  for (const auto& [name, value] : optional_fields) {
    if (!value->empty()) {
      params.emplace_back(name, *value);
    }
  }
  params.insert(params.end(), notice.extra.begin(), notice.extra.end());
  return params;
}

std::string alipay_signed_form(const FormParams& params, EVP_PKEY* private_key) {
  const bool gbk = names_gbk(params);
  FormParams encoded;  // key, value in the form's charset
  encoded.reserve(params.size());
  for (const auto& [key, value] : params) {
    if (!gbk) {
      encoded.emplace_back(key, value);
      continue;
    }
    auto converted = codec::utf8_to_gbk(value);
    if (!converted) {
      throw std::invalid_argument("alipay_signed_form: a value cannot be encoded in GBK");
    }
    encoded.emplace_back(key, std::move(*converted));
  }
  FormParams sorted = encoded;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string content;
  for (const auto& [key, value] : sorted) {
    if (key == "sign" || key == "sign_type") {
      continue;
    }
    content.append(content.empty() ? "" : "&").append(key).append("=").append(value);
  }
  const std::string sign = codec::base64_encode(codec::rsa_sha256_sign(private_key, content));
  std::string body;
  for (const auto& [key, value] : encoded) {
    body.append(codec::form_encode(key)).append("=").append(codec::form_encode(value)).append("&");
  }
  body.append("sign=").append(codec::form_encode(sign)).append("&sign_type=RSA2");
  return body;
}

std::string wechat_transaction_json(const WechatTransaction& transaction, std::int64_t now_ms) {
  json doc = {
      {"mchid", transaction.mchid},
      {"appid", transaction.appid},
      {"out_trade_no", transaction.out_trade_no},
      {"trade_type", "NATIVE"},
      {"trade_state", transaction.trade_state},
      {"trade_state_desc", transaction.trade_state},
      {"bank_type", "OTHERS"},
      {"attach", ""},
      {"success_time", codec::china_time(now_ms, true)},
      {"payer", {{"openid", "o-seatflow-test-payer"}}},
  };
  if (!transaction.transaction_id.empty()) {
    doc["transaction_id"] = transaction.transaction_id;
  }
  if (transaction.amount_total_fen) {
    doc["amount"] = {{"total", *transaction.amount_total_fen},
                     {"payer_total", *transaction.amount_total_fen},
                     {"currency", "CNY"},
                     {"payer_currency", "CNY"}};
  }
  return doc.dump();
}

std::string wechat_notification_body(std::string_view id, std::string_view plaintext,
                                     std::string_view apiv3_key, std::string_view trade_state,
                                     std::int64_t now_ms) {
  constexpr std::string_view kAssociatedData = "transaction";
  const std::string nonce = codec::random_alnum(12);
  const std::string sealed = codec::aes256gcm_seal(apiv3_key, nonce, kAssociatedData, plaintext);
  const json doc = {
      {"id", std::string(id)},
      {"create_time", codec::china_time(now_ms, true)},
      {"resource_type", "encrypt-resource"},
      {"event_type", "TRANSACTION." + std::string(trade_state)},
      {"summary", "\xE6\x94\xAF\xE4\xBB\x98\xE6\x88\x90\xE5\x8A\x9F"},  // 支付成功 in UTF-8
      {"resource",
       {{"original_type", "transaction"},
        {"algorithm", "AEAD_AES_256_GCM"},
        {"ciphertext", codec::base64_encode(sealed)},
        {"associated_data", std::string(kAssociatedData)},
        {"nonce", nonce}}},
  };
  return doc.dump();
}

WechatSignedHeaders wechat_sign(std::string_view body, std::string_view serial,
                                std::int64_t timestamp_s, EVP_PKEY* private_key) {
  WechatSignedHeaders headers;
  headers.timestamp = std::to_string(timestamp_s);
  headers.nonce = codec::random_alnum(32);
  headers.serial = std::string(serial);
  std::string message;
  message.reserve(headers.timestamp.size() + headers.nonce.size() + body.size() + 3);
  message.append(headers.timestamp).append("\n").append(headers.nonce).append("\n");
  message.append(body).append("\n");
  headers.signature = codec::base64_encode(codec::rsa_sha256_sign(private_key, message));
  return headers;
}

}  // namespace seatflow::channels

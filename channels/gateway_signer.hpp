// The sending side of the alipay and wechat dialects: signed notifies as the gateways build them,
// for `seatflow sign`, tests and benchmarks. Needs the gateway's private key; never used to verify.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codec/crypto.hpp"

namespace seatflow::channels {

using FormParams = std::vector<std::pair<std::string, std::string>>;

// The fields of an Alipay trade_status_sync notify. Empty optional fields are left out.
struct AlipayNotice {
  std::string app_id;
  std::string seller_id;
  std::string notify_id;
  std::string out_trade_no;
  std::string trade_no;
  std::string trade_status = "TRADE_SUCCESS";
  std::string total_amount;  // yuan text as Alipay writes it, e.g. "50.00"
  std::string charset = "utf-8";
  FormParams extra;  // further params in UTF-8, e.g. {"subject", "..."}
};

// The notify's params in UTF-8, with the usual companions (notify_time, notify_type, version).
[[nodiscard]] FormParams alipay_notice_params(const AlipayNotice& notice, std::int64_t now_ms);

// The form body Alipay would send for `params` (UTF-8 text): values converted to the charset its
// `charset` param names (GBK for "gbk"), RSA2-signed over the sorted "k=v&..." bytes in that
// charset, every key and value URL-encoded, then sign and sign_type=RSA2 appended. Throws
// std::invalid_argument when a value cannot be encoded in GBK, std::runtime_error when signing
// fails.
[[nodiscard]] std::string alipay_signed_form(const FormParams& params, EVP_PKEY* private_key);

// The decrypted transaction of a WeChat Pay v3 payment notify.
struct WechatTransaction {
  std::string mchid;
  std::string appid = "wx0000000000000000";
  std::string out_trade_no;
  std::string transaction_id;  // left out when empty
  std::string trade_state = "SUCCESS";
  std::optional<std::int64_t> amount_total_fen;  // "amount" left out when absent
};
// Its JSON text (ids must be valid UTF-8).
[[nodiscard]] std::string wechat_transaction_json(const WechatTransaction& transaction,
                                                  std::int64_t now_ms);

// A notification body carrying `plaintext` sealed with AES-256-GCM under the APIv3 key (random
// 12-character nonce, associated_data "transaction"). Throws std::invalid_argument when the key
// is not 32 bytes.
[[nodiscard]] std::string wechat_notification_body(std::string_view id, std::string_view plaintext,
                                                   std::string_view apiv3_key,
                                                   std::string_view trade_state,
                                                   std::int64_t now_ms);

struct WechatSignedHeaders {
  std::string timestamp;  // epoch seconds
  std::string nonce;
  std::string signature;  // base64 RSA-SHA256 over timestamp\nnonce\nbody\n
  std::string serial;
};
// The four Wechatpay-* header values for `body` (random 32-character nonce).
[[nodiscard]] WechatSignedHeaders wechat_sign(std::string_view body, std::string_view serial,
                                              std::int64_t timestamp_s, EVP_PKEY* private_key);

}  // namespace seatflow::channels

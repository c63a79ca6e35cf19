// Builds and prints signed alipay/wechat notifies for `seatflow sign` (see gateway_sign.hpp).
#include "app/gateway_sign.hpp"

#include <chrono>
#include <ostream>
#include <stdexcept>

#include "channels/alipay_channel.hpp"
#include "channels/gateway_signer.hpp"

namespace seatflow::app {

namespace {

// Wraps `text` in single quotes for a POSIX shell.
std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

std::string notify_url(const Config& config, std::string_view channel) {
  std::string url = "http://";
  url.append(config.http.host).append(":").append(std::to_string(config.http.port));
  url.append("/api/payment/notify/").append(channel);
  return url;
}

std::string or_default(const std::string& value, const std::string& fallback) {
  return value.empty() ? fallback : value;
}

int sign_alipay(const GatewaySignOptions& options, const Config& config, EVP_PKEY* key,
                std::int64_t now_ms, std::ostream& out, std::ostream& err) {
  channels::AlipayNotice notice;
  notice.app_id = or_default(options.app_id, config.alipay ? config.alipay->app_id : "");
  if (notice.app_id.empty()) {
    err << "seatflow: sign: --app-id is required (or set SEATFLOW_ALIPAY_APP_ID)\n";
    return 2;
  }
  if (!channels::parse_yuan_to_cents(options.amount)) {
    err << "seatflow: sign: --amount must be yuan with at most 2 decimals, e.g. 50.00\n";
    return 2;
  }
  const std::string stamp = std::to_string(now_ms);
  notice.seller_id = config.alipay ? config.alipay->seller_id : "";
  notice.notify_id = or_default(options.notify_id, "notify-" + options.payment_no + "-" + stamp);
  notice.out_trade_no = options.payment_no;
  notice.trade_no = or_default(options.trade_no, "2088" + stamp);
  notice.trade_status = options.trade_status;
  notice.total_amount = options.amount;
  notice.charset = options.charset;
  const auto body =
      channels::alipay_signed_form(channels::alipay_notice_params(notice, now_ms), key);
  if (options.body_only) {
    out << body << '\n';
    return 0;
  }
  out << body << "\n\ncurl -sS -X POST " << notify_url(config, "alipay")
      << " -H 'Content-Type: application/x-www-form-urlencoded' --data-binary " << shell_quote(body)
      << '\n';
  return 0;
}

int sign_wechat(const GatewaySignOptions& options, const Config& config, EVP_PKEY* key,
                std::int64_t now_ms, std::ostream& out, std::ostream& err) {
  const auto* wechat = config.wechat ? &*config.wechat : nullptr;
  const auto apiv3_key = or_default(options.apiv3_key, wechat ? wechat->apiv3_key : "");
  const auto mchid = or_default(options.mchid, wechat ? wechat->mchid : "");
  const auto serial =
      or_default(options.serial,
                 wechat && !wechat->platform_keys.empty() ? wechat->platform_keys[0].serial : "");
  if (apiv3_key.size() != channels::kAesGcmKeyBytes || mchid.empty() || serial.empty()) {
    err << "seatflow: sign: wechat needs --apiv3-key (32 bytes), --mchid and --serial "
           "(or the SEATFLOW_WECHAT_* settings)\n";
    return 2;
  }
  const std::string stamp = std::to_string(now_ms);
  channels::WechatTransaction transaction;
  transaction.mchid = mchid;
  transaction.out_trade_no = options.payment_no;
  transaction.transaction_id = or_default(options.transaction_id, "4200" + stamp);
  transaction.trade_state = options.trade_state;
  transaction.amount_total_fen = options.amount_fen;
  const auto id = or_default(options.id, "EV-" + options.payment_no + "-" + stamp);
  const auto body =
      channels::wechat_notification_body(id, channels::wechat_transaction_json(transaction, now_ms),
                                         apiv3_key, options.trade_state, now_ms);
  const auto headers = channels::wechat_sign(body, serial, now_ms / 1000, key);
  if (options.body_only) {
    out << body << '\n';
    return 0;
  }
  out << body << "\n\nWechatpay-Timestamp: " << headers.timestamp
      << "\nWechatpay-Nonce: " << headers.nonce << "\nWechatpay-Signature: " << headers.signature
      << "\nWechatpay-Serial: " << headers.serial << "\n\ncurl -sS -X POST "
      << notify_url(config, "wechat") << " -H 'Content-Type: application/json'"
      << " -H " << shell_quote("Wechatpay-Timestamp: " + headers.timestamp) << " -H "
      << shell_quote("Wechatpay-Nonce: " + headers.nonce) << " -H "
      << shell_quote("Wechatpay-Signature: " + headers.signature) << " -H "
      << shell_quote("Wechatpay-Serial: " + headers.serial) << " --data-binary "
      << shell_quote(body) << '\n';
  return 0;
}

}  // namespace

int run_gateway_sign(const GatewaySignOptions& options, const Config& config, std::ostream& out,
                     std::ostream& err) {
  if (options.private_key_path.empty()) {
    err << "seatflow: sign: --private-key PEM is required for --channel " << options.channel
        << '\n';
    return 2;
  }
  std::string why;
  const auto key = channels::load_private_key_file(options.private_key_path, &why);
  if (!key) {
    err << "seatflow: sign: --private-key " << why << '\n';
    return 2;
  }
  const std::int64_t now_ms = options.timestamp_ms != 0
                                  ? options.timestamp_ms
                                  : std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count();
  try {
    if (options.channel == "alipay") {
      return sign_alipay(options, config, key.get(), now_ms, out, err);
    }
    if (options.channel == "wechat") {
      return sign_wechat(options, config, key.get(), now_ms, out, err);
    }
  } catch (const std::exception& e) {
    // Bad input such as an id that is not UTF-8 or a subject GBK cannot encode.
    err << "seatflow: sign: " << e.what() << '\n';
    return 2;
  }
  err << "seatflow: sign: --channel must be hmac, alipay or wechat\n";
  return 2;
}

}  // namespace seatflow::app

// Builds and prints signed alipay/wechat/stripe/standard notifies for `seatflow sign`.
#include "app/gateway_sign.hpp"

#include <ostream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "channels/alipay/alipay_channel.hpp"
#include "channels/gateway_signer.hpp"
#include "channels/standard/standard_channel.hpp"
#include "channels/stripe/stripe_channel.hpp"
#include "domain/clock.hpp"

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
  if (apiv3_key.size() != codec::kAesGcmKeyBytes || mchid.empty() || serial.empty()) {
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

// Prints `body` with its headers and a curl line that sends them.
void print_signed(const Config& config, std::string_view channel, const std::string& body,
                  const std::vector<std::pair<std::string, std::string>>& headers,
                  std::ostream& out) {
  out << body << "\n\n";
  for (const auto& [name, value] : headers) {
    out << name << ": " << value << '\n';
  }
  out << "\ncurl -sS -X POST " << notify_url(config, channel)
      << " -H 'Content-Type: application/json'";
  for (const auto& [name, value] : headers) {
    out << " -H " << shell_quote(name + ": " + value);
  }
  out << " --data-binary " << shell_quote(body) << '\n';
}

int sign_stripe(const GatewaySignOptions& options, const Config& config, std::int64_t now_ms,
                std::ostream& out, std::ostream& err) {
  if (!config.stripe) {
    err << "seatflow: sign: --channel stripe needs SEATFLOW_STRIPE_WEBHOOK_SECRETS\n";
    return 2;
  }
  const std::string stamp = std::to_string(now_ms);
  channels::StripeEvent event;
  event.id = or_default(options.callback_id, "evt_" + options.payment_no + "_" + stamp);
  event.type = or_default(
      options.event_type,
      std::string(options.status == 1 ? channels::kStripeSucceeded : channels::kStripeFailed));
  event.payment_no = options.payment_no;
  event.payment_intent_id = or_default(options.trade_no, "pi_" + stamp);
  event.amount = options.amount_cents;
  event.currency = config.currency;
  event.created_s = now_ms / 1000;
  const auto body = channels::stripe_event_body(event);
  const channels::StripeChannel channel(*config.stripe);
  const auto header = channels::stripe_signature_header(channel.keys(), now_ms / 1000, body);
  if (options.body_only) {
    out << body << '\n';
    return 0;
  }
  print_signed(config, "stripe", body, {{"Stripe-Signature", header}}, out);
  return 0;
}

int sign_standard(const GatewaySignOptions& options, const Config& config, std::int64_t now_ms,
                  std::ostream& out, std::ostream& err) {
  if (!config.standard) {
    err << "seatflow: sign: --channel standard needs SEATFLOW_STANDARD_WEBHOOK_SECRETS\n";
    return 2;
  }
  const std::string stamp = std::to_string(now_ms);
  channels::StandardEvent event;
  event.type = or_default(
      options.event_type,
      std::string(options.status == 1 ? channels::kStandardSucceeded : channels::kStandardFailed));
  event.payment_no = options.payment_no;
  event.amount_cents = options.amount_cents;
  event.trade_no = or_default(options.trade_no, "trade-" + stamp);
  event.timestamp_s = now_ms / 1000;
  const auto id = or_default(options.callback_id, "msg_" + options.payment_no + "_" + stamp);
  const auto body = channels::standard_event_body(event);
  const channels::StandardChannel channel(*config.standard);
  const auto timestamp = std::to_string(now_ms / 1000);
  const auto signature = channels::standard_signature(channel.keys(), id, now_ms / 1000, body);
  if (options.body_only) {
    out << body << '\n';
    return 0;
  }
  print_signed(
      config, "standard", body,
      {{"webhook-id", id}, {"webhook-timestamp", timestamp}, {"webhook-signature", signature}},
      out);
  return 0;
}

std::int64_t sign_time_ms(const GatewaySignOptions& options) {
  return options.timestamp_ms != 0 ? options.timestamp_ms : domain::unix_time_ms();
}

}  // namespace

int run_gateway_sign(const GatewaySignOptions& options, const Config& config, std::ostream& out,
                     std::ostream& err) {
  try {
    if (options.channel == "stripe") {
      return sign_stripe(options, config, sign_time_ms(options), out, err);
    }
    if (options.channel == "standard") {
      return sign_standard(options, config, sign_time_ms(options), out, err);
    }
  } catch (const std::exception& e) {
    // An id that is not UTF-8, say.
    err << "seatflow: sign: " << e.what() << '\n';
    return 2;
  }
  if (options.private_key_path.empty()) {
    err << "seatflow: sign: --private-key PEM is required for --channel " << options.channel
        << '\n';
    return 2;
  }
  const auto loaded = codec::load_private_key_file(options.private_key_path);
  if (!loaded.ok()) {
    err << "seatflow: sign: --private-key " << loaded.detail() << '\n';
    return 2;
  }
  const auto& key = loaded.value();
  const std::int64_t now_ms = sign_time_ms(options);
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
  err << "seatflow: sign: --channel must be hmac, alipay, wechat, stripe or standard\n";
  return 2;
}

}  // namespace seatflow::app

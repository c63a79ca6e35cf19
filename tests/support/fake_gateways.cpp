// The fake Alipay, WeChat Pay and hmac gateways (see the header): real signatures both ways; their
// payment create and close live in fake_payments.cpp.
#include "support/fake_gateways.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

#include <nlohmann/json.hpp>

#include "channels/alipay/alipay_channel.hpp"
#include "channels/alipay/alipay_payment.hpp"
#include "channels/alipay/alipay_refund.hpp"
#include "channels/gateway_signer.hpp"
#include "channels/hmac/hmac_payment.hpp"
#include "channels/hmac/hmac_refund.hpp"
#include "channels/timestamped_hmac.hpp"
#include "channels/wechat/wechat_payment.hpp"
#include "channels/wechat/wechat_query.hpp"
#include "channels/wechat/wechat_refund.hpp"
#include "codec/crypto.hpp"
#include "codec/text.hpp"
#include "domain/clock.hpp"

namespace seatflow::testing {
namespace {

using nlohmann::json;

constexpr std::int64_t kWechatClockWindowMs = channels::kWebhookWindowMs;
constexpr std::int64_t kStaleBackdateS = 600;

const TestKeyPair& impostor_key() {
  return test_key("gateway-impostor");
}

// `"name":<value as a JSON string>`, the way a hand-built answer keeps its members in order.
std::string member(const std::string& name, const std::string& value) {
  return json(name).dump() + ":" + json(value).dump();
}

std::string alipay_error_member(const std::string& code, const std::string& sub_code,
                                const std::string& out_trade_no) {
  std::string text =
      "{" + member("code", code) + "," + member("msg", "Business Failed") + "," +
      member("sub_code", sub_code) + "," +
      member("sub_msg", "\xE4\xBA\xA4\xE6\x98\x93\xE4\xB8\x8D\xE5\xAD\x98\xE5\x9C\xA8");
  if (!out_trade_no.empty()) {
    text += "," + member("out_trade_no", out_trade_no);
  }
  return text + "}";
}

// RSA2 as Alipay's OpenAPI checks a request: every param but `sign`, sign_type included.
bool alipay_request_verifies(const channels::AlipayForm& form, EVP_PKEY* merchant_public_key) {
  channels::AlipayForm signed_form = form;
  if (form.sign_type) {
    signed_form.signed_params.push_back(channels::FormParam{"sign_type", *form.sign_type});
  }
  std::sort(signed_form.signed_params.begin(), signed_form.signed_params.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  const std::string content = channels::alipay_sign_content(signed_form);
  const auto signature = codec::base64_decode(form.sign, channels::kAlipayMaxSignatureBytes);
  const std::array<std::string_view, 1> pieces{content};
  return signature && codec::rsa_sha256_verify(merchant_public_key, pieces, *signature);
}

// The response member of an OpenAPI method the fake serves; empty for any other.
std::string_view alipay_member_of(std::string_view method) {
  if (method == channels::kAlipayQueryMethod) {
    return channels::kAlipayQueryResponseMember;
  }
  if (method == channels::kAlipayRefundMethod) {
    return channels::kAlipayRefundResponseMember;
  }
  if (method == channels::kAlipayPrecreateMethod) {
    return channels::kAlipayPrecreateResponseMember;
  }
  if (method == channels::kAlipayCloseMethod) {
    return channels::kAlipayCloseResponseMember;
  }
  return {};
}

std::string form_value(const channels::AlipayForm& form, std::string_view key) {
  const std::string* value = form.find(key);
  return value == nullptr ? std::string() : *value;
}

}  // namespace

std::optional<std::map<std::string, std::string>> parse_wechat_authorization(
    std::string_view header) {
  const std::string scheme = std::string(channels::kWechatAuthScheme) + " ";
  if (!header.starts_with(scheme)) {
    return std::nullopt;
  }
  std::map<std::string, std::string> fields;
  std::string_view rest = header.substr(scheme.size());
  while (!rest.empty()) {
    const auto eq = rest.find("=\"");
    if (eq == std::string_view::npos) {
      return std::nullopt;
    }
    const auto close = rest.find('"', eq + 2);
    if (close == std::string_view::npos) {
      return std::nullopt;
    }
    fields[std::string(rest.substr(0, eq))] = std::string(rest.substr(eq + 2, close - eq - 2));
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ',') {
        return std::nullopt;
      }
      rest.remove_prefix(1);
    }
  }
  return fields;
}

std::string cents_to_yuan(std::int64_t cents) {
  const std::string fraction = std::to_string(100 + cents % 100).substr(1);
  return std::to_string(cents / 100) + "." + fraction;
}

void FakeGatewayState::set_trade(const std::string& payment_no, FakeTrade trade) {
  const std::lock_guard lock(mutex_);
  trades_[payment_no] = std::move(trade);
}

void FakeGatewayState::set_answer(FakeAnswer answer) {
  const std::lock_guard lock(mutex_);
  answer_ = answer;
}

int FakeGatewayState::refused_signatures() const {
  const std::lock_guard lock(mutex_);
  return refused_signatures_;
}

std::optional<FakeTrade> FakeGatewayState::trade(const std::string& payment_no) const {
  const std::lock_guard lock(mutex_);
  const auto it = trades_.find(payment_no);
  if (it == trades_.end()) {
    return std::nullopt;
  }
  return it->second;
}

FakeAnswer FakeGatewayState::answer() const {
  const std::lock_guard lock(mutex_);
  return answer_;
}

void FakeGatewayState::count_refused() {
  const std::lock_guard lock(mutex_);
  ++refused_signatures_;
}

std::vector<std::string> FakeGatewayState::refund_requests() const {
  const std::lock_guard lock(mutex_);
  return refund_requests_;
}

int FakeGatewayState::refunds_made() const {
  const std::lock_guard lock(mutex_);
  return static_cast<int>(refunds_.size());
}

std::int64_t FakeGatewayState::refunded_cents() const {
  const std::lock_guard lock(mutex_);
  std::int64_t total = 0;
  for (const auto& [refund_no, cents] : refunds_) {
    total += cents;
  }
  return total;
}

void FakeGatewayState::note_refund_request(const std::string& refund_no) {
  const std::lock_guard lock(mutex_);
  refund_requests_.push_back(refund_no);
}

void FakeGatewayState::refund(const std::string& refund_no, std::int64_t amount_cents,
                              bool* again) {
  const std::lock_guard lock(mutex_);
  *again = !refunds_.emplace(refund_no, amount_cents).second;
}

FakeAlipay::FakeAlipay(std::string app_id, const TestKeyPair& merchant_key,
                       const TestKeyPair& alipay_key)
    : FakeGatewayState(FakeStateWords{"WAIT_BUYER_PAY", "TRADE_SUCCESS", "TRADE_CLOSED"}),
      app_id_(std::move(app_id)),
      merchant_key_(merchant_key),
      alipay_key_(alipay_key),
      server_(std::make_unique<TestHttpServer>(
          [this](const ServerRequest& request) { return handle(request); }, true)) {}

std::string FakeAlipay::url() const {
  return server_->base_url() + "/gateway.do";
}

std::string FakeAlipay::response_member(const std::string& payment_no) {
  const auto known = trade(payment_no);
  if (!known) {
    return alipay_error_member("40004", "ACQ.TRADE_NOT_EXIST", payment_no);
  }
  const auto mode = answer();
  const std::string out_trade_no =
      mode == FakeAnswer::other_payment ? payment_no + "-OTHER" : payment_no;
  const std::int64_t amount = known->amount_cents + (mode == FakeAnswer::other_amount ? 1 : 0);
  // Alipay's own member order (not sorted), so only the raw bytes verify.
  std::string text = "{" + member("code", "10000") + "," + member("msg", "Success") + "," +
                     member("buyer_logon_id", "159****5620") + "," +
                     member("buyer_pay_amount", cents_to_yuan(amount)) + "," +
                     member("out_trade_no", out_trade_no) + ",";
  if (!known->trade_no.empty()) {
    text += member("trade_no", known->trade_no) + ",";
  }
  text += member("trade_status", known->state) + "," +
          member("total_amount", cents_to_yuan(amount)) + "," +
          member("send_pay_date", "2026-12-01 18:00:00") + "}";
  return text;
}

std::string FakeAlipay::refund_member(const json& biz) {
  const std::string payment_no = biz["out_trade_no"].get<std::string>();
  const std::string refund_no = biz.value("out_request_no", std::string());
  note_refund_request(refund_no);
  const auto known = trade(payment_no);
  if (!known) {
    return alipay_error_member("40004", "ACQ.TRADE_NOT_EXIST", payment_no);
  }
  const auto mode = answer();
  if (mode == FakeAnswer::refuse) {
    return alipay_error_member("40004", "ACQ.SELLER_BALANCE_NOT_ENOUGH", payment_no);
  }
  const auto asked = channels::parse_yuan_to_cents(biz.value("refund_amount", std::string()));
  if (refund_no.empty() || !asked || *asked != known->amount_cents) {
    return alipay_error_member("40004", "ACQ.REFUND_AMT_NOT_EQUAL_TOTAL", payment_no);
  }
  bool again = false;
  refund(refund_no, *asked, &again);
  const std::string out_trade_no =
      mode == FakeAnswer::other_payment ? payment_no + "-OTHER" : payment_no;
  const std::int64_t amount = *asked + (mode == FakeAnswer::other_amount ? 1 : 0);
  return "{" + member("code", "10000") + "," + member("msg", "Success") + "," +
         member("buyer_logon_id", "159****5620") + "," + member("fund_change", again ? "N" : "Y") +
         "," + member("gmt_refund_pay", "2026-12-01 18:00:00") + "," +
         member("out_trade_no", out_trade_no) + "," + member("refund_fee", cents_to_yuan(amount)) +
         "," + member("trade_no", known->trade_no) + "}";
}

ServerResponse FakeAlipay::handle(const ServerRequest& request) {
  if (request.method != "POST" || request.target != "/gateway.do" ||
      !request.header("content-type").starts_with("application/x-www-form-urlencoded")) {
    return ServerResponse{400, {}, "not an OpenAPI request", 0};
  }
  const auto parsed = channels::parse_alipay_form(request.body);
  const auto* form = parsed.ok() ? &parsed.value() : nullptr;
  const std::string method = form == nullptr ? std::string() : form_value(*form, "method");
  const std::string_view member_name = alipay_member_of(method);
  std::string response;
  if (form == nullptr || form->sign_type != std::optional<std::string>("RSA2") ||
      !alipay_request_verifies(*form, merchant_key_.public_key.get())) {
    count_refused();
    response = alipay_error_member("40002", "isv.invalid-signature", "");
  } else if (form_value(*form, "app_id") != app_id_ || member_name.empty()) {
    response = alipay_error_member("40002", "isv.invalid-app-id", "");
  } else {
    const json biz = json::parse(form_value(*form, "biz_content"), nullptr, false);
    const bool named =
        biz.is_object() && biz.contains("out_trade_no") && biz["out_trade_no"].is_string();
    if (!named) {
      response = alipay_error_member("40002", "isv.missing-parameter", "");
    } else if (method == channels::kAlipayRefundMethod) {
      response = refund_member(biz);
    } else if (method == channels::kAlipayPrecreateMethod) {
      response = precreate_member(biz, form_value(*form, "notify_url"));
    } else if (method == channels::kAlipayCloseMethod) {
      response = close_member(biz);
    } else {
      response = response_member(biz["out_trade_no"].get<std::string>());
    }
  }
  const auto mode = answer();
  if (mode == FakeAnswer::malformed_json) {
    response.resize(response.size() / 2);
  }
  const auto& signer = mode == FakeAnswer::bad_signature ? impostor_key() : alipay_key_;
  std::string body =
      "{" + json(member_name.empty() ? channels::kAlipayQueryResponseMember : member_name).dump() +
      ":" + response;
  if (mode != FakeAnswer::unsigned_answer) {
    body += "," + member("sign", codec::base64_encode(
                                     codec::rsa_sha256_sign(signer.private_key.get(), response)));
  }
  body += "}";
  return ServerResponse{200,
                        {{"Content-Type", "text/html;charset=utf-8"}},
                        std::move(body),
                        mode == FakeAnswer::stall ? kFakeStallMs : 0};
}

FakeWechatPay::FakeWechatPay(std::string mchid, std::string merchant_serial,
                             const TestKeyPair& merchant_key, std::string platform_serial,
                             const TestKeyPair& platform_key)
    : FakeGatewayState(FakeStateWords{"NOTPAY", "SUCCESS", "CLOSED"}),
      mchid_(std::move(mchid)),
      merchant_serial_(std::move(merchant_serial)),
      merchant_key_(merchant_key),
      platform_serial_(std::move(platform_serial)),
      platform_key_(platform_key),
      server_(std::make_unique<TestHttpServer>(
          [this](const ServerRequest& request) { return handle(request); }, true)) {}

bool wechat_merchant_signed(const ServerRequest& request, const std::string& mchid,
                            const std::string& merchant_serial, const TestKeyPair& merchant_key) {
  const auto fields = parse_wechat_authorization(request.header("authorization"));
  if (!fields || fields->count("mchid") == 0 || fields->at("mchid") != mchid ||
      fields->count("serial_no") == 0 || fields->at("serial_no") != merchant_serial ||
      fields->count("nonce_str") == 0 || fields->count("timestamp") == 0 ||
      fields->count("signature") == 0) {
    return false;
  }
  const std::string& timestamp = fields->at("timestamp");
  const auto sent_s = channels::parse_unix_seconds(timestamp);
  if (!sent_s ||
      !channels::within_window_s(domain::unix_time_ms(), *sent_s, kWechatClockWindowMs)) {
    return false;
  }
  const std::string message = request.method + "\n" + request.target + "\n" + timestamp + "\n" +
                              fields->at("nonce_str") + "\n" + request.body + "\n";
  const auto signature = codec::base64_decode(fields->at("signature"), 1024);
  const std::array<std::string_view, 1> pieces{message};
  return signature && codec::rsa_sha256_verify(merchant_key.public_key.get(), pieces, *signature);
}

bool FakeWechatPay::authorized(const ServerRequest& request) const {
  return wechat_merchant_signed(request, mchid_, merchant_serial_, merchant_key_);
}

ServerResponse FakeWechatPay::signed_answer(int status, std::string body) const {
  const auto mode = answer();
  const auto& signer = mode == FakeAnswer::bad_signature ? impostor_key() : platform_key_;
  const std::string serial =
      mode == FakeAnswer::unknown_serial ? "UNKNOWN-SERIAL" : platform_serial_;
  const std::int64_t timestamp_s =
      domain::unix_time_ms() / 1000 - (mode == FakeAnswer::stale_timestamp ? kStaleBackdateS : 0);
  auto signed_headers = channels::wechat_sign(body, serial, timestamp_s, signer.private_key.get());
  if (mode == FakeAnswer::probe_signature) {
    signed_headers.signature = std::string(channels::kWechatProbePrefix) + signed_headers.signature;
  }
  ServerResponse response{status,
                          {{"Content-Type", "application/json"}},
                          std::move(body),
                          mode == FakeAnswer::stall ? kFakeStallMs : 0};
  if (mode != FakeAnswer::unsigned_answer) {
    response.headers.emplace_back("Wechatpay-Timestamp", signed_headers.timestamp);
    response.headers.emplace_back("Wechatpay-Nonce", signed_headers.nonce);
    response.headers.emplace_back("Wechatpay-Signature", signed_headers.signature);
    response.headers.emplace_back("Wechatpay-Serial", signed_headers.serial);
  }
  return response;
}

ServerResponse FakeWechatPay::refund(const ServerRequest& request) {
  const json body = json::parse(request.body, nullptr, false);
  if (!body.is_object() || !body.contains("out_trade_no") || !body["out_trade_no"].is_string() ||
      !body.contains("out_refund_no") || !body["out_refund_no"].is_string() ||
      !body.contains("amount") || !body["amount"].is_object()) {
    return signed_answer(400, R"({"code":"PARAM_ERROR","message":"body"})");
  }
  const auto payment_no = body["out_trade_no"].get<std::string>();
  const auto refund_no = body["out_refund_no"].get<std::string>();
  note_refund_request(refund_no);
  const auto known = trade(payment_no);
  if (!known) {
    return signed_answer(404, R"({"code":"RESOURCE_NOT_EXISTS","message":"no such order"})");
  }
  const auto mode = answer();
  if (mode == FakeAnswer::refuse) {
    return signed_answer(403, R"({"code":"NOT_ENOUGH","message":"balance not enough"})");
  }
  const auto& amount = body["amount"];
  if (amount.value("refund", std::int64_t{-1}) != known->amount_cents ||
      amount.value("total", std::int64_t{-1}) != known->amount_cents ||
      amount.value("currency", std::string()) != "CNY") {
    return signed_answer(400, R"({"code":"PARAM_ERROR","message":"amount"})");
  }
  bool again = false;
  FakeGatewayState::refund(refund_no, known->amount_cents, &again);
  const std::int64_t refunded = known->amount_cents + (mode == FakeAnswer::other_amount ? 1 : 0);
  const json answer_body = {
      {"refund_id", "50000000382019052709732678859"},
      {"out_refund_no", refund_no},
      {"transaction_id", known->trade_no},
      {"out_trade_no", mode == FakeAnswer::other_payment ? payment_no + "-OTHER" : payment_no},
      {"channel", "ORIGINAL"},
      {"create_time", "2026-12-01T18:00:00+08:00"},
      // The first answer is the accepted refund, a repeat finds it done.
      {"status", again ? "SUCCESS" : "PROCESSING"},
      {"amount",
       {{"total", known->amount_cents},
        {"refund", refunded},
        {"payer_total", known->amount_cents},
        {"payer_refund", refunded},
        {"currency", "CNY"}}}};
  std::string text = answer_body.dump();
  if (mode == FakeAnswer::malformed_json) {
    text.resize(text.size() / 2);
  }
  return signed_answer(200, std::move(text));
}

ServerResponse FakeWechatPay::handle(const ServerRequest& request) {
  const std::string prefix(channels::kWechatQueryPath);
  const std::string suffix(channels::kWechatClosePathSuffix);
  const bool closing = request.target.starts_with(prefix) && request.target.ends_with(suffix) &&
                       request.target.size() > prefix.size() + suffix.size();
  if (request.method == "POST" && (request.target == channels::kWechatRefundPath ||
                                   request.target == channels::kWechatNativePath || closing)) {
    if (!authorized(request)) {
      count_refused();
      return signed_answer(401, R"({"code":"SIGN_ERROR","message":"signature mismatch"})");
    }
    if (request.target == channels::kWechatNativePath) {
      return native(request);
    }
    if (!closing) {
      return refund(request);
    }
    const auto payment_no = codec::form_decode(request.target.substr(
        prefix.size(), request.target.size() - prefix.size() - suffix.size()));
    return close(request, payment_no.value_or(""));
  }
  if (request.method != "GET" || !request.target.starts_with(prefix)) {
    return signed_answer(404, R"({"code":"NOT_FOUND","message":"no such API"})");
  }
  if (!authorized(request)) {
    count_refused();
    return signed_answer(401, R"({"code":"SIGN_ERROR","message":"signature mismatch"})");
  }
  const std::string rest = request.target.substr(prefix.size());
  const auto query = rest.find('?');
  const auto payment_no = codec::form_decode(rest.substr(0, query));
  if (query == std::string::npos || !payment_no || rest.substr(query + 1) != "mchid=" + mchid_) {
    return signed_answer(400, R"({"code":"PARAM_ERROR","message":"mchid"})");
  }
  const auto known = trade(*payment_no);
  if (!known) {
    return signed_answer(
        404, R"({"code":"ORDER_NOT_EXIST","message":")"
             "\xE8\xAE\xA2\xE5\x8D\x95\xE4\xB8\x8D\xE5\xAD\x98\xE5\x9C\xA8\"}");  // 订单不存在
  }
  const auto mode = answer();
  channels::WechatTransaction transaction;
  transaction.mchid = mchid_;
  transaction.out_trade_no =
      mode == FakeAnswer::other_payment ? *payment_no + "-OTHER" : *payment_no;
  transaction.transaction_id = known->trade_no;
  transaction.trade_state = known->state;
  transaction.amount_total_fen = known->amount_cents + (mode == FakeAnswer::other_amount ? 1 : 0);
  std::string body = channels::wechat_transaction_json(transaction, domain::unix_time_ms());
  if (mode == FakeAnswer::malformed_json) {
    body.resize(body.size() / 2);
  }
  return signed_answer(200, std::move(body));
}

FakeHmacGateway::FakeHmacGateway(std::string secret)
    : secret_(std::move(secret)),
      server_(std::make_unique<TestHttpServer>(
          [this](const ServerRequest& request) { return handle(request); }, false)) {}

ServerResponse FakeHmacGateway::handle(const ServerRequest& request) {
  if (request.method == "POST" && request.target == channels::kHmacCreatePath) {
    return create(request);
  }
  if (const auto closing = channels::hmac_close_payment_no(request.target);
      request.method == "POST" && closing) {
    return close(request, *closing);
  }
  if (request.method != "POST" || request.target != channels::kHmacRefundPath) {
    return ServerResponse{404, {}, "not found", 0};
  }
  return refund_request(request);
}

ServerResponse FakeHmacGateway::refund_request(const ServerRequest& request) {
  auto read = channels::hmac_refund_read_request(request.body, {secret_}, domain::unix_time_ms(),
                                                 channels::kWebhookWindowMs);
  if (!read.ok()) {
    count_refused();
    return ServerResponse{401, {}, read.detail(), 0};
  }
  auto refund_request = std::move(read).value();
  note_refund_request(refund_request.refund_no);
  const auto mode = answer();
  const auto known = trade(refund_request.payment_no);
  bool succeeded = false;
  std::string reason;
  if (!known) {
    reason = "unknown payment";
  } else if (mode == FakeAnswer::refuse) {
    reason = "balance not enough";
  } else if (refund_request.amount_cents != known->amount_cents) {
    reason = "amount differs from the payment's";
  } else {
    bool again = false;
    refund(refund_request.refund_no, refund_request.amount_cents, &again);
    succeeded = true;
    reason = again ? "already refunded" : "refunded";
  }
  if (mode == FakeAnswer::other_payment) {
    refund_request.payment_no += "-OTHER";
  }
  if (mode == FakeAnswer::other_amount) {
    refund_request.amount_cents += 1;
  }
  std::string body = channels::hmac_refund_answer_body(
      mode == FakeAnswer::bad_signature ? std::string("impostor-secret") : secret_, refund_request,
      succeeded, reason, domain::unix_time_ms());
  if (mode == FakeAnswer::malformed_json) {
    body.resize(body.size() / 2);
  }
  return ServerResponse{200,
                        {{"Content-Type", "application/json"}},
                        std::move(body),
                        mode == FakeAnswer::stall ? kFakeStallMs : 0};
}

}  // namespace seatflow::testing

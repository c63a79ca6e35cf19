// The fake gateways' payment create and close (SPEC §16; see fake_gateways.hpp): a payment number
// makes one trade however often it is asked, a close closes a waiting trade, and each answer is
// the gateway's own for the state the trade is in.
#include <utility>

#include <nlohmann/json.hpp>

#include "channels/alipay/alipay_channel.hpp"
#include "channels/alipay/alipay_payment.hpp"
#include "channels/hmac/hmac_payment.hpp"
#include "channels/timestamped_hmac.hpp"
#include "channels/wechat/wechat_payment.hpp"
#include "codec/bill_text.hpp"
#include "codec/crypto.hpp"
#include "codec/text.hpp"
#include "domain/clock.hpp"
#include "support/fake_gateways.hpp"

namespace seatflow::testing {
namespace {

using nlohmann::json;

// "2026-12-08T10:00:00+08:00" (WeChat Pay's time_expire) as epoch ms; 0 for anything else.
std::int64_t fake_pay_wechat_time_ms(std::string_view text) {
  if (text.size() != 25 || text[10] != 'T' || !text.ends_with("+08:00")) {
    return 0;
  }
  const std::string china = std::string(text.substr(0, 10)) + " " + std::string(text.substr(11, 8));
  return codec::parse_china_time_ms(china).value_or(0);
}

std::string fake_pay_alipay_error(const std::string& sub_code) {
  return json{{"code", "40004"}, {"msg", "Business Failed"}, {"sub_code", sub_code}}.dump();
}

const std::string* fake_pay_string(const json& doc, const char* name) {
  const auto it = doc.find(name);
  return it != doc.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

// An hmac answer as the mode shapes it on its way out (the trade's record stays the truth).
ServerResponse fake_pay_hmac_shaped(FakeAnswer mode, int status, std::string body) {
  if (mode == FakeAnswer::unsigned_answer) {
    json doc = json::parse(body);
    doc.erase("sign");
    body = doc.dump();
  }
  if (mode == FakeAnswer::malformed_json) {
    body.resize(body.size() / 2);
  }
  return ServerResponse{status,
                        {{"Content-Type", "application/json"}},
                        std::move(body),
                        mode == FakeAnswer::stall ? kFakeStallMs : 0};
}

}  // namespace

std::optional<FakeCreation> FakeGatewayState::created(const std::string& payment_no) const {
  const std::lock_guard lock(mutex_);
  const auto it = creations_.find(payment_no);
  return it == creations_.end() ? std::nullopt : std::optional(it->second);
}

int FakeGatewayState::trades_created() const {
  const std::lock_guard lock(mutex_);
  return trades_made_;
}

int FakeGatewayState::closes() const {
  const std::lock_guard lock(mutex_);
  return closes_;
}

FakeTradeState FakeGatewayState::trade_state(const std::string& payment_no) const {
  const auto known = trade(payment_no);
  return known ? state_of(*known) : FakeTradeState::unknown;
}

void FakeGatewayState::pay(const std::string& payment_no) {
  const std::lock_guard lock(mutex_);
  const auto it = trades_.find(payment_no);
  if (it != trades_.end()) {
    it->second.state = words_.paid;
    if (it->second.trade_no.empty()) {
      it->second.trade_no = "T-" + payment_no;
    }
  }
}

FakeTrade FakeGatewayState::create_trade(const std::string& payment_no, const FakeCreation& asked) {
  const std::lock_guard lock(mutex_);
  auto& creation = creations_[payment_no];
  if (creation.requests == 0) {
    creation = asked;
  }
  ++creation.requests;
  const auto [it, made] =
      trades_.emplace(payment_no, FakeTrade{words_.pending, asked.amount_cents, ""});
  trades_made_ += made ? 1 : 0;
  return it->second;
}

FakeTradeState FakeGatewayState::close_trade(const std::string& payment_no) {
  const std::lock_guard lock(mutex_);
  const auto it = trades_.find(payment_no);
  if (it == trades_.end()) {
    return FakeTradeState::unknown;
  }
  const auto before = state_of(it->second);
  if (before == FakeTradeState::pending) {
    it->second.state = words_.closed;
  }
  return before;
}

// The words are set once, at construction: no lock.
FakeTradeState FakeGatewayState::state_of(const FakeTrade& trade) const {
  if (trade.state == words_.paid) {
    return FakeTradeState::paid;
  }
  if (trade.state == words_.closed) {
    return FakeTradeState::closed;
  }
  return FakeTradeState::pending;
}

void FakeGatewayState::count_close() {
  const std::lock_guard lock(mutex_);
  ++closes_;
}

// --- alipay -----------------------------------------------------------------------------------

std::string FakeAlipay::precreate_member(const json& biz, const std::string& notify_url) {
  const std::string payment_no = biz["out_trade_no"].get<std::string>();
  const std::string* yuan = fake_pay_string(biz, "total_amount");
  const auto amount = yuan == nullptr ? std::nullopt : channels::parse_yuan_to_cents(*yuan);
  if (!amount || notify_url.empty()) {
    return fake_pay_alipay_error("ACQ.INVALID_PARAMETER");
  }
  const auto mode = answer();
  if (mode == FakeAnswer::refuse) {
    return fake_pay_alipay_error("ACQ.ACCESS_FORBIDDEN");
  }
  const std::string* expires = fake_pay_string(biz, "time_expire");
  const auto trade = create_trade(
      payment_no,
      {*amount, expires == nullptr ? 0 : codec::parse_china_time_ms(*expires).value_or(0),
       notify_url, 0});
  switch (state_of(trade)) {
    case FakeTradeState::paid:
      return fake_pay_alipay_error(std::string(channels::kAlipayTradeHasSuccess));
    case FakeTradeState::closed:
      return fake_pay_alipay_error("ACQ.TRADE_HAS_CLOSE");
    default:
      break;
  }
  return json{
      {"code", "10000"},
      {"msg", "Success"},
      {"out_trade_no", mode == FakeAnswer::other_payment ? payment_no + "-OTHER" : payment_no},
      {"qr_code", "https://qr.alipay.com/fake-" + codec::form_encode(payment_no)}}
      .dump();
}

std::string FakeAlipay::close_member(const json& biz) {
  const std::string payment_no = biz["out_trade_no"].get<std::string>();
  count_close();
  const auto mode = answer();
  if (mode == FakeAnswer::refuse) {
    return fake_pay_alipay_error("ACQ.SYSTEM_ERROR");
  }
  switch (close_trade(payment_no)) {
    case FakeTradeState::unknown:
      return fake_pay_alipay_error(std::string(channels::kAlipayTradeNotExist));
    case FakeTradeState::paid:
      return fake_pay_alipay_error(std::string(channels::kAlipayTradeHasSuccess));
    case FakeTradeState::closed:
      return fake_pay_alipay_error("ACQ.TRADE_STATUS_ERROR");
    case FakeTradeState::pending:
      break;
  }
  return json{
      {"code", "10000"},
      {"msg", "Success"},
      {"out_trade_no", mode == FakeAnswer::other_payment ? payment_no + "-OTHER" : payment_no}}
      .dump();
}

// --- wechat -----------------------------------------------------------------------------------

ServerResponse FakeWechatPay::native(const ServerRequest& request) {
  const json body = json::parse(request.body, nullptr, false);
  const json amount = body.is_object() ? body.value("amount", json()) : json();
  const std::string* payment_no =
      body.is_object() ? fake_pay_string(body, "out_trade_no") : nullptr;
  const std::string* mchid = body.is_object() ? fake_pay_string(body, "mchid") : nullptr;
  const std::string* appid = body.is_object() ? fake_pay_string(body, "appid") : nullptr;
  const std::string* notify_url = body.is_object() ? fake_pay_string(body, "notify_url") : nullptr;
  if (payment_no == nullptr || mchid == nullptr || *mchid != mchid_ || appid == nullptr ||
      appid->empty() || notify_url == nullptr || !amount.is_object() ||
      amount.value("total", std::int64_t{0}) <= 0 || amount.value("currency", "") != "CNY") {
    return signed_answer(400, R"({"code":"PARAM_ERROR","message":"body"})");
  }
  if (answer() == FakeAnswer::refuse) {
    return signed_answer(403, R"({"code":"NO_AUTH","message":"no permission"})");
  }
  const auto trade = create_trade(
      *payment_no, {amount["total"].get<std::int64_t>(),
                    fake_pay_wechat_time_ms(body.value("time_expire", "")), *notify_url, 0});
  switch (state_of(trade)) {
    case FakeTradeState::paid:
      return signed_answer(400, R"({"code":"ORDERPAID","message":"paid"})");
    case FakeTradeState::closed:
      return signed_answer(400, R"({"code":"ORDER_CLOSED","message":"closed"})");
    default:
      break;
  }
  std::string text =
      json{{"code_url", "weixin://wxpay/bizpayurl?pr=fake-" + codec::form_encode(*payment_no)}}
          .dump();
  if (answer() == FakeAnswer::malformed_json) {
    text.resize(text.size() / 2);
  }
  return signed_answer(200, std::move(text));
}

ServerResponse FakeWechatPay::close(const ServerRequest& request, const std::string& payment_no) {
  const json body = json::parse(request.body, nullptr, false);
  const std::string* mchid = body.is_object() ? fake_pay_string(body, "mchid") : nullptr;
  if (payment_no.empty() || mchid == nullptr || *mchid != mchid_) {
    return signed_answer(400, R"({"code":"PARAM_ERROR","message":"mchid"})");
  }
  count_close();
  if (answer() == FakeAnswer::refuse) {
    return signed_answer(403, R"({"code":"RULE_LIMIT","message":"later"})");
  }
  switch (close_trade(payment_no)) {
    case FakeTradeState::unknown:
      return signed_answer(404, R"({"code":"ORDER_NOT_EXIST","message":"none"})");
    case FakeTradeState::paid:
      return signed_answer(400, R"({"code":"ORDERPAID","message":"paid"})");
    case FakeTradeState::closed:
      return signed_answer(400, R"({"code":"ORDER_CLOSED","message":"closed"})");
    case FakeTradeState::pending:
      break;
  }
  return signed_answer(204, "");
}

// --- hmac -------------------------------------------------------------------------------------

ServerResponse FakeHmacGateway::create(const ServerRequest& request) {
  const auto now = domain::unix_time_ms();
  const auto read =
      channels::hmac_create_read_request(request.body, {secret_}, now, channels::kWebhookWindowMs);
  if (!read.ok()) {
    count_refused();
    return ServerResponse{401, {}, read.detail(), 0};
  }
  const auto& asked = read.value();
  const auto mode = answer();
  const std::string signer = mode == FakeAnswer::bad_signature ? "impostor-secret" : secret_;
  const std::string named =
      mode == FakeAnswer::other_payment ? asked.payment_no + "-OTHER" : asked.payment_no;
  if (mode == FakeAnswer::refuse) {
    return fake_pay_hmac_shaped(mode, 409,
                                channels::hmac_refusal_body(signer, named, "refused", now));
  }
  const auto trade = create_trade(asked.payment_no,
                                  {asked.amount_cents, asked.expires_at_ms, asked.notify_url, 0});
  const auto state = state_of(trade);
  if (state == FakeTradeState::paid || state == FakeTradeState::closed) {
    return fake_pay_hmac_shaped(
        mode, 409,
        channels::hmac_refusal_body(signer, named,
                                    state == FakeTradeState::paid ? "paid" : "closed", now));
  }
  const std::string pay_url = url() + "/pay/" + codec::form_encode(asked.payment_no);
  return fake_pay_hmac_shaped(mode, 200,
                              channels::hmac_create_answer_body(signer, named, pay_url, now));
}

ServerResponse FakeHmacGateway::close(const ServerRequest& request, const std::string& payment_no) {
  const auto now = domain::unix_time_ms();
  const auto read =
      channels::hmac_close_read_request(request.body, {secret_}, now, channels::kWebhookWindowMs);
  if (!read.ok()) {
    count_refused();
    return ServerResponse{401, {}, read.detail(), 0};
  }
  if (read.value().payment_no != payment_no) {
    return ServerResponse{400, {}, "the path and the body name other payments", 0};
  }
  count_close();
  const auto mode = answer();
  const std::string signer = mode == FakeAnswer::bad_signature ? "impostor-secret" : secret_;
  const std::string named = mode == FakeAnswer::other_payment ? payment_no + "-OTHER" : payment_no;
  if (mode == FakeAnswer::refuse) {
    return fake_pay_hmac_shaped(mode, 409,
                                channels::hmac_refusal_body(signer, named, "refused", now));
  }
  auto status = channels::HmacCloseStatus::closed;
  switch (close_trade(payment_no)) {
    case FakeTradeState::unknown:
      status = channels::HmacCloseStatus::not_found;
      break;
    case FakeTradeState::paid:
      status = channels::HmacCloseStatus::paid;
      break;
    default:
      break;
  }
  return fake_pay_hmac_shaped(mode, 200,
                              channels::hmac_close_answer_body(signer, named, status, now));
}

}  // namespace seatflow::testing

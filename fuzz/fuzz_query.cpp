// libFuzzer target: the alipay and wechat query answers — the raw-member scan, the mappings
// behind the signatures, answer() with a throwaway key, and a self-signed alipay answer — and the
// refund answers of the three refund dialects and the create and close answers of the wechat,
// alipay and hmac payment dialects (SPEC §16) the same way.
// Input: optional "name: value" header lines, a blank line, then the body.
#include <string>
#include <type_traits>

#include "channels/alipay/alipay_payment.hpp"
#include "channels/alipay/alipay_query.hpp"
#include "channels/alipay/alipay_refund.hpp"
#include "channels/hmac/hmac_payment.hpp"
#include "channels/hmac/hmac_refund.hpp"
#include "channels/wechat/wechat_payment.hpp"
#include "channels/wechat/wechat_query.hpp"
#include "channels/wechat/wechat_refund.hpp"
#include "codec/text.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace seatflow;

const channels::QueryTarget kTarget{"P-0001", 5000};
const std::string kMchid = "1900000001";

net::Url gateway() {
  net::Url url;
  url.tls = true;
  url.host = "gateway.test";
  url.port = 443;
  return url;
}

const channels::AlipayQuery& alipay() {
  static const channels::AlipayQuery instance(
      {"2021000000000001", gateway(), fuzz::throwaway_key(), fuzz::throwaway_key()});
  return instance;
}

const channels::WechatQuery& wechat() {
  static const channels::WechatQuery instance({kMchid,
                                               gateway(),
                                               fuzz::throwaway_key(),
                                               "MERCHANT-1",
                                               {{"SERIAL-1", fuzz::throwaway_key()}}});
  return instance;
}

// What every answer a dialect lets through must satisfy, whatever the input.
void check_query(const channels::Result<channels::QueryAnswer>& result) {
  if (const auto* rejection = (result.ok() ? nullptr : &result.failure())) {
    fuzz::require(!rejection->detail.empty() && rejection->detail.size() <= 256,
                  "rejection detail empty or long");
    return;
  }
  const auto& answer = result.value();
  if (answer.amount_cents) {
    fuzz::require(*answer.amount_cents == kTarget.amount_cents, "an answer with another amount");
  }
  if (answer.state == channels::QueryState::paid) {
    fuzz::require(answer.amount_cents.has_value(), "paid without an amount");
    fuzz::require(codec::is_valid_id(answer.trade_no), "paid without a valid trade no");
  }
}

net::Response response(int status, std::string_view body, const codec::Headers& headers) {
  net::Response out;
  out.status = status;
  out.body = std::string(body);
  for (const auto& [name, value] : headers) {
    out.headers.emplace_back(name, value);
  }
  return out;
}

const channels::RefundTarget kRefund{"P-0001", "rfd_0123456789abcdef0123", 5000, "fuzz"};

const channels::AlipayRefund& alipay_refund() {
  static const channels::AlipayRefund instance(
      {"2021000000000001", gateway(), fuzz::throwaway_key(), fuzz::throwaway_key()});
  return instance;
}

const channels::WechatRefund& wechat_refund() {
  static const channels::WechatRefund instance({kMchid,
                                                gateway(),
                                                fuzz::throwaway_key(),
                                                "MERCHANT-1",
                                                {{"SERIAL-1", fuzz::throwaway_key()}}});
  return instance;
}

const channels::HmacRefund& hmac_refund() {
  static const channels::HmacRefund instance(channels::HmacConfig{{"fuzz-refund-secret"}, 300'000},
                                             gateway());
  return instance;
}

void check_refund(const channels::Result<channels::RefundAnswer>& result) {
  const std::string& text = result.ok() ? result.value().reason : result.detail();
  fuzz::require(text.size() <= 256, "refund reason or rejection too long");
  for (const char c : text) {
    fuzz::require(static_cast<unsigned char>(c) >= 0x20, "a control byte in a refund reason");
  }
  if (const auto* rejection = (result.ok() ? nullptr : &result.failure())) {
    fuzz::require(!rejection->detail.empty(), "empty refund rejection");
  }
}

void fuzz_refunds(std::string_view body, const codec::Headers& headers) {
  if (const auto raw = channels::raw_json_member(body, channels::kAlipayRefundResponseMember)) {
    const std::string self_signed =
        std::string("{\"alipay_trade_refund_response\":") + std::string(*raw) + ",\"sign\":\"" +
        codec::base64_encode(codec::rsa_sha256_sign(fuzz::throwaway_key().get(), *raw)) + "\"}";
    check_refund(
        alipay_refund().refund_answer(kRefund, response(200, self_signed, {}), fuzz::kNowMs));
  }
  check_refund(channels::alipay_refund_answer_from(body, kRefund));
  for (const int status : {200, 403, 404}) {
    check_refund(channels::wechat_refund_answer_from(status, body, kRefund));
    const auto wechat_result =
        wechat_refund().refund_answer(kRefund, response(status, body, headers), fuzz::kNowMs);
    check_refund(wechat_result);
    fuzz::require(!wechat_result.ok(),
                  "a fuzzed wechat refund answer verified under a throwaway key");
  }
  const auto hmac_result =
      hmac_refund().refund_answer(kRefund, response(200, body, {}), fuzz::kNowMs);
  check_refund(hmac_result);
  fuzz::require(!hmac_result.ok(), "a fuzzed hmac refund answer verified without the secret");
  (void)channels::hmac_refund_read_request(body, {"fuzz-refund-secret"}, fuzz::kNowMs, 300'000);
}

const channels::CreateTarget kCreate{
    "P-0001", "O-0001", 5000, fuzz::kNowMs + 900'000, "https://seatflow.test/api/payment/notify/x",
    "fuzz"};
const channels::CloseTarget kClose{"P-0001", ""};

// A reason or a rejection's detail: bounded, no control byte; a created answer carries a pay value.
template <class T>
void check_payment(const channels::Result<T>& result) {
  const std::string& text = result.ok() ? result.value().reason : result.detail();
  fuzz::require(text.size() <= 256, "payment reason or rejection too long");
  for (const char c : text) {
    fuzz::require(static_cast<unsigned char>(c) >= 0x20, "a control byte in a payment reason");
  }
  if constexpr (std::is_same_v<T, channels::CreateAnswer>) {
    if (result.ok() && result.value().created) {
      fuzz::require(channels::valid_pay_value(result.value().value), "created without a pay value");
    }
  }
}

void fuzz_payments(std::string_view body, const codec::Headers& headers) {
  static const channels::AlipayPayment alipay_payment(
      {"2021000000000001", gateway(), fuzz::throwaway_key(), fuzz::throwaway_key()});
  static const channels::WechatPayment wechat_payment({kMchid,
                                                       gateway(),
                                                       fuzz::throwaway_key(),
                                                       "MERCHANT-1",
                                                       {{"SERIAL-1", fuzz::throwaway_key()}}},
                                                      "wx8888888888888888");
  static const channels::HmacPayment hmac_payment(
      channels::HmacConfig{{"fuzz-payment-secret"}, 300'000}, gateway());
  check_payment(channels::alipay_precreate_answer_from(body, kCreate));
  check_payment(channels::alipay_close_answer_from(body, kClose));
  check_payment(alipay_payment.create_answer(kCreate, response(200, body, {}), fuzz::kNowMs));
  for (const int status : {200, 204, 400, 404}) {
    check_payment(channels::wechat_create_answer_from(status, body));
    check_payment(channels::wechat_close_answer_from(status, body));
    const auto created =
        wechat_payment.create_answer(kCreate, response(status, body, headers), fuzz::kNowMs);
    const auto closed =
        wechat_payment.close_answer(kClose, response(status, body, headers), fuzz::kNowMs);
    fuzz::require(!created.ok() && !closed.ok(),
                  "a fuzzed wechat payment answer verified under a throwaway key");
    const auto hmac_created =
        hmac_payment.create_answer(kCreate, response(status, body, {}), fuzz::kNowMs);
    const auto hmac_closed =
        hmac_payment.close_answer(kClose, response(status, body, {}), fuzz::kNowMs);
    fuzz::require(!hmac_created.ok() && !hmac_closed.ok(),
                  "a fuzzed hmac payment answer verified without the secret");
  }
  (void)channels::hmac_create_read_request(body, {"fuzz-payment-secret"}, fuzz::kNowMs, 300'000);
  (void)channels::hmac_close_read_request(body, {"fuzz-payment-secret"}, fuzz::kNowMs, 300'000);
  (void)channels::hmac_close_payment_no(body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = fuzz::as_text(data, size);
  codec::Headers headers;
  const auto body = fuzz::split_headers(input, headers);
  if (const auto raw = channels::raw_json_member(body, channels::kAlipayQueryResponseMember)) {
    fuzz::require(!raw->empty() && raw->data() >= body.data() &&
                      raw->data() + raw->size() <= body.data() + body.size(),
                  "raw member outside the body");
    // Signed with the key the dialect trusts, the answer gets past the signature.
    const std::string self_signed =
        std::string("{\"alipay_trade_query_response\":") + std::string(*raw) + ",\"sign\":\"" +
        codec::base64_encode(codec::rsa_sha256_sign(fuzz::throwaway_key().get(), *raw)) + "\"}";
    const auto result = alipay().answer(kTarget, response(200, self_signed, {}), fuzz::kNowMs);
    check_query(result);
    if (const auto* rejection = (result.ok() ? nullptr : &result.failure())) {
      fuzz::require(rejection->detail != "signature does not verify",
                    "a self-signed raw member does not verify");
    }
  }
  check_query(channels::alipay_query_answer_from(body, kTarget));
  const auto unsigned_alipay = alipay().answer(kTarget, response(200, body, {}), fuzz::kNowMs);
  check_query(unsigned_alipay);
  for (const int status : {200, 404}) {
    check_query(channels::wechat_query_answer_from(status, body, kMchid, kTarget));
    const auto result = wechat().answer(kTarget, response(status, body, headers), fuzz::kNowMs);
    check_query(result);
    // Nobody can forge RSA here: an answer means the signature check is broken.
    fuzz::require(!result.ok(), "a fuzzed wechat answer verified under a throwaway key");
  }
  fuzz_refunds(body, headers);
  fuzz_payments(body, headers);
  return 0;
}

// Fake Alipay and WeChat Pay query, refund and payment (create, close) servers on loopback HTTPS
// (the test CA), and a fake hmac refund and payment gateway on loopback HTTP: they verify the
// merchant's request signature as the real gateways do, answer signed in the gateway's own format,
// refund a refund number at most once, create a payment number at most once (asking again answers
// the same trade), close a waiting trade, answer "paid" for a paid one, and can be told to answer
// badly for the bad-answer tests.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "channels/query.hpp"
#include "support/rejections.hpp"
#include "support/test_http_server.hpp"
#include "support/test_keys.hpp"

namespace seatflow::testing {

// How a fake gateway answers the next requests.
enum class FakeAnswer : std::uint8_t {
  honest,           // the truth, signed by the gateway's key
  bad_signature,    // signed by a key that is not the gateway's
  unsigned_answer,  // the truth without a signature
  other_payment,    // signed, but about another out_trade_no
  other_amount,     // signed, but one cent more
  malformed_json,   // signed bytes that are not JSON
  stall,            // the truth, after kFakeStallMs
  unknown_serial,   // wechat: Wechatpay-Serial names a key the merchant does not have
  probe_signature,  // wechat: a WECHATPAY/SIGNTEST/ signature
  stale_timestamp,  // wechat: Wechatpay-Timestamp ten minutes old
  refuse,           // refunds, creates and closes: a signed refusal, nothing made or closed
};
inline constexpr int kFakeStallMs = 2000;

// A payment the fake gateway knows, in the gateway's own words.
struct FakeTrade {
  std::string state;  // "TRADE_SUCCESS", "WAIT_BUYER_PAY", ... or "SUCCESS", "NOTPAY", ...
  std::int64_t amount_cents = 0;
  std::string trade_no;  // left out when empty
};

// A payment's state at a fake gateway, whatever the gateway calls it (SPEC §16).
enum class FakeTradeState : std::uint8_t { unknown, pending, paid, closed };

// What the signed create requests of one payment number asked the gateway (SPEC §16).
struct FakeCreation {
  std::int64_t amount_cents = 0;
  std::int64_t expires_at_ms = 0;  // 0 = no deadline named (Stripe never names one)
  std::string notify_url;          // empty for Stripe, which has none per payment
  int requests = 0;                // how often it was asked, the first time included
};

// The fields of a `WECHATPAY2-SHA256-RSA2048 k="v",...` header; nullopt when it is not one.
[[nodiscard]] std::optional<std::map<std::string, std::string>> parse_wechat_authorization(
    std::string_view header);

// Whether `request` carries a merchant's Authorization that WeChat Pay would take: mchid and
// serial_no as given, a timestamp within the clock window, and an RSA signature over the
// request's sign content (built by hand, not with the dialect's helper, so a mistake there cannot
// hide) under the merchant's public key.
[[nodiscard]] bool wechat_merchant_signed(const ServerRequest& request, const std::string& mchid,
                                          const std::string& merchant_serial,
                                          const TestKeyPair& merchant_key);

// "50.00" for 5000.
[[nodiscard]] std::string cents_to_yuan(std::int64_t cents);

// The gateway's own words for the three states of a trade (FakeTrade::state).
struct FakeStateWords {
  std::string pending = "pending";
  std::string paid = "paid";
  std::string closed = "closed";
};

// State shared by the fakes: the trades, the answer mode, what the requests were.
class FakeGatewayState {
 public:
  FakeGatewayState() = default;
  explicit FakeGatewayState(FakeStateWords words) : words_(std::move(words)) {}
  // Virtual: tests hold a fake of any gateway through this base.
  virtual ~FakeGatewayState() = default;
  FakeGatewayState(const FakeGatewayState&) = delete;
  FakeGatewayState& operator=(const FakeGatewayState&) = delete;

  void set_trade(const std::string& payment_no, FakeTrade trade);
  void set_answer(FakeAnswer answer);
  [[nodiscard]] int refused_signatures() const;
  // The refund number of every signed refund request that reached the gateway, in order.
  [[nodiscard]] std::vector<std::string> refund_requests() const;
  // Refunds made (one per refund number) and their total.
  [[nodiscard]] int refunds_made() const;
  [[nodiscard]] std::int64_t refunded_cents() const;

  // SPEC §16. What the creates of a payment asked; nullopt when no signed create named it.
  [[nodiscard]] std::optional<FakeCreation> created(const std::string& payment_no) const;
  // Trades the creates made: one per payment number, however often it was asked.
  [[nodiscard]] int trades_created() const;
  // Signed close requests that reached the gateway, in all.
  [[nodiscard]] int closes() const;
  [[nodiscard]] virtual FakeTradeState trade_state(const std::string& payment_no) const;
  // The customer pays a trade the gateway knows (created or set): it becomes paid.
  virtual void pay(const std::string& payment_no);

 protected:
  // A signed create: recorded, and a waiting trade made unless the number has one; the trade.
  FakeTrade create_trade(const std::string& payment_no, const FakeCreation& asked);
  // A signed close: a waiting trade becomes closed; the state it had (unknown when none).
  FakeTradeState close_trade(const std::string& payment_no);
  [[nodiscard]] FakeTradeState state_of(const FakeTrade& trade) const;
  void count_close();
  [[nodiscard]] std::optional<FakeTrade> trade(const std::string& payment_no) const;
  [[nodiscard]] FakeAnswer answer() const;
  void count_refused();
  // A signed refund request: recorded, and the refund made unless this number made it before
  // (then `again` is set). The caller checked that the trade exists and the mode is not refuse.
  void refund(const std::string& refund_no, std::int64_t amount_cents, bool* again);
  void note_refund_request(const std::string& refund_no);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, FakeTrade> trades_;
  FakeAnswer answer_ = FakeAnswer::honest;
  int refused_signatures_ = 0;
  std::vector<std::string> refund_requests_;
  std::map<std::string, std::int64_t> refunds_;
  FakeStateWords words_;
  std::map<std::string, FakeCreation> creations_;
  int trades_made_ = 0;
  int closes_ = 0;
};

// POST /gateway.do, methods alipay.trade.query, .refund, .precreate and .close. A request whose
// RSA2 signature does not verify with the merchant's public key is answered with code 40002
// isv.invalid-signature. Its words: WAIT_BUYER_PAY, TRADE_SUCCESS, TRADE_CLOSED. A precreate of
// a waiting trade answers its qr_code again; of a paid or closed one ACQ.TRADE_HAS_SUCCESS or
// ACQ.TRADE_HAS_CLOSE. A close of a waiting trade closes it; of a paid one ACQ.TRADE_HAS_SUCCESS;
// of a closed one ACQ.TRADE_STATUS_ERROR; of an unknown one ACQ.TRADE_NOT_EXIST.
class FakeAlipay : public FakeGatewayState {
 public:
  FakeAlipay(std::string app_id, const TestKeyPair& merchant_key, const TestKeyPair& alipay_key);
  // https://127.0.0.1:<port>/gateway.do
  [[nodiscard]] std::string url() const;
  [[nodiscard]] int requests() const { return server_->requests(); }

 private:
  [[nodiscard]] ServerResponse handle(const ServerRequest& request);
  [[nodiscard]] std::string response_member(const std::string& payment_no);
  // alipay.trade.refund: the alipay_trade_refund_response member.
  [[nodiscard]] std::string refund_member(const nlohmann::json& biz);
  // alipay.trade.precreate and alipay.trade.close (tests/support/fake_payments.cpp).
  [[nodiscard]] std::string precreate_member(const nlohmann::json& biz,
                                             const std::string& notify_url);
  [[nodiscard]] std::string close_member(const nlohmann::json& biz);

  std::string app_id_;
  const TestKeyPair& merchant_key_;
  const TestKeyPair& alipay_key_;
  std::unique_ptr<TestHttpServer> server_;  // last: its thread calls handle()
};

// GET /v3/pay/transactions/out-trade-no/{no}?mchid=, POST /v3/refund/domestic/refunds,
// POST /v3/pay/transactions/native and POST /v3/pay/transactions/out-trade-no/{no}/close. A request
// whose Authorization does not verify with the merchant's public key (or names another merchant
// serial) is answered 401. Its words: NOTPAY, SUCCESS, CLOSED. A Native order of a waiting trade
// answers its code_url again; of a paid or closed one 400 ORDERPAID or ORDER_CLOSED. A close of a
// waiting trade answers 204 (signed over the empty body); of a paid one 400 ORDERPAID, of a closed
// one 400 ORDER_CLOSED, of an unknown one 404 ORDER_NOT_EXIST.
class FakeWechatPay : public FakeGatewayState {
 public:
  FakeWechatPay(std::string mchid, std::string merchant_serial, const TestKeyPair& merchant_key,
                std::string platform_serial, const TestKeyPair& platform_key);
  // https://127.0.0.1:<port>
  [[nodiscard]] std::string url() const { return server_->base_url(); }
  [[nodiscard]] int requests() const { return server_->requests(); }

 private:
  [[nodiscard]] ServerResponse handle(const ServerRequest& request);
  [[nodiscard]] bool authorized(const ServerRequest& request) const;
  [[nodiscard]] ServerResponse signed_answer(int status, std::string body) const;
  // POST /v3/refund/domestic/refunds, already authorized.
  [[nodiscard]] ServerResponse refund(const ServerRequest& request);
  // POST /v3/pay/transactions/native and the close, already authorized (fake_payments.cpp).
  [[nodiscard]] ServerResponse native(const ServerRequest& request);
  [[nodiscard]] ServerResponse close(const ServerRequest& request, const std::string& payment_no);

  std::string mchid_;
  std::string merchant_serial_;
  const TestKeyPair& merchant_key_;
  std::string platform_serial_;
  const TestKeyPair& platform_key_;
  std::unique_ptr<TestHttpServer> server_;  // last: its thread calls handle()
};

// POST /api/gateway/refunds, POST /api/gateway/payments and POST /api/gateway/payments/{no}/close
// of the hmac gateway (channels/hmac/hmac_refund.hpp, hmac_payment.hpp), plain HTTP. A request
// that does not verify under `secret` is answered 401. Refunds a payment it knows (set_trade). Its
// words: pending, paid, closed. A create of a waiting trade answers its payUrl again; of a paid or
// closed one a signed refusal (409 "paid" or "closed"). A close answers closed (a waiting or
// closed trade), paid or not_found.
class FakeHmacGateway : public FakeGatewayState {
 public:
  explicit FakeHmacGateway(std::string secret);
  // http://127.0.0.1:<port>: SEATFLOW_HMAC_GATEWAY_URL
  [[nodiscard]] std::string url() const { return server_->base_url(); }
  [[nodiscard]] int requests() const { return server_->requests(); }

 private:
  [[nodiscard]] ServerResponse handle(const ServerRequest& request);
  [[nodiscard]] ServerResponse refund_request(const ServerRequest& request);
  // The create and the close (fake_payments.cpp).
  [[nodiscard]] ServerResponse create(const ServerRequest& request);
  [[nodiscard]] ServerResponse close(const ServerRequest& request, const std::string& payment_no);

  std::string secret_;
  std::unique_ptr<TestHttpServer> server_;  // last: its thread calls handle()
};

}  // namespace seatflow::testing

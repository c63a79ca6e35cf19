// Fake Alipay and WeChat Pay query and refund servers on loopback HTTPS (the test CA), and a fake
// hmac refund gateway on loopback HTTP: they verify the merchant's request signature as the real
// gateways do, answer signed in the gateway's own format, refund a refund number at most once,
// and can be told to answer badly for the bad-answer tests.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
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
  refuse,           // refunds: a signed refusal (balance not enough) and no refund made
};
inline constexpr int kFakeStallMs = 2000;

// A payment the fake gateway knows, in the gateway's own words.
struct FakeTrade {
  std::string state;  // "TRADE_SUCCESS", "WAIT_BUYER_PAY", ... or "SUCCESS", "NOTPAY", ...
  std::int64_t amount_cents = 0;
  std::string trade_no;  // left out when empty
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

// State shared by both fakes: the trades, the answer mode, what the requests were.
class FakeGatewayState {
 public:
  FakeGatewayState() = default;
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

 protected:
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
};

// POST /gateway.do, method alipay.trade.query. A request whose RSA2 signature does not verify
// with the merchant's public key is answered with code 40002 isv.invalid-signature.
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

  std::string app_id_;
  const TestKeyPair& merchant_key_;
  const TestKeyPair& alipay_key_;
  std::unique_ptr<TestHttpServer> server_;  // last: its thread calls handle()
};

// GET /v3/pay/transactions/out-trade-no/{no}?mchid=. A request whose Authorization does not
// verify with the merchant's public key (or names another merchant serial) is answered 401.
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

  std::string mchid_;
  std::string merchant_serial_;
  const TestKeyPair& merchant_key_;
  std::string platform_serial_;
  const TestKeyPair& platform_key_;
  std::unique_ptr<TestHttpServer> server_;  // last: its thread calls handle()
};

// POST /api/gateway/refunds of the hmac gateway (channels/hmac/hmac_refund.hpp), plain HTTP. A
// request that does not verify under `secret` is answered 401. Refunds a payment it knows
// (set_trade).
class FakeHmacGateway : public FakeGatewayState {
 public:
  explicit FakeHmacGateway(std::string secret);
  // http://127.0.0.1:<port>: SEATFLOW_HMAC_GATEWAY_URL
  [[nodiscard]] std::string url() const { return server_->base_url(); }
  [[nodiscard]] int requests() const { return server_->requests(); }

 private:
  [[nodiscard]] ServerResponse handle(const ServerRequest& request);

  std::string secret_;
  std::unique_ptr<TestHttpServer> server_;  // last: its thread calls handle()
};

}  // namespace seatflow::testing

// A fake Stripe API on loopback HTTPS (the test CA): GET /v1/payment_intents/search, POST
// /v1/refunds, GET /v1/balance_transactions, POST /v1/payment_intents and POST
// /v1/payment_intents/{id}/cancel, answering in Stripe's JSON shapes from data the test sets up.
// Every request must carry the test's secret key as a bearer token (else 401, as Stripe answers);
// refunds and creates honour Idempotency-Key as Stripe does (a retry with the same key and
// parameters is answered the same, and makes nothing again; a refusal is not kept); balance
// transactions are listed newest first in real pages (limit, starting_after, has_more,
// created[gte]/created[lt]). A cancel of a succeeded, processing or canceled intent answers 400
// payment_intent_unexpected_state with the intent; of another one cancels it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/fake_gateways.hpp"
#include "support/test_http_server.hpp"

namespace seatflow::testing {

// A PaymentIntent as the fake knows it.
struct FakeIntent {
  std::string id;  // pi_…
  std::string status = "succeeded";
  std::int64_t amount = 0;
  std::string currency = "cny";
  bool failed_attempt = false;  // last_payment_error set (a declined attempt)
  std::string order_no = {};    // metadata.orderNo, when set
};

class FakeStripe : public FakeGatewayState {
 public:
  explicit FakeStripe(std::string api_key);
  // https://127.0.0.1:<port>: SEATFLOW_STRIPE_API_URL
  [[nodiscard]] std::string url() const { return server_->base_url(); }
  [[nodiscard]] int requests() const { return server_->requests(); }

  // The intent whose metadata.paymentNo is `payment_no`; a second call for one payment adds a
  // second intent with that paymentNo (search then finds both).
  void add_intent(const std::string& payment_no, FakeIntent intent);
  // A charge (type `charge`) of an intent, its balance transaction created at `created_s`.
  void add_charge(const std::string& intent_id, const std::string& payment_no, std::int64_t amount,
                  std::int64_t fee, std::int64_t created_s);
  // A refund (type `refund`, amount negative) of an intent; `refund_no` goes in its metadata
  // when not empty.
  void add_refund(const std::string& intent_id, const std::string& refund_id,
                  const std::string& refund_no, std::int64_t amount, std::int64_t created_s);
  // A balance transaction of another type (payout, stripe_fee, …), its source not a charge.
  void add_other(const std::string& type, std::int64_t amount, std::int64_t created_s);
  // The targets of every balance-transaction request, in order.
  [[nodiscard]] std::vector<std::string> bill_requests() const;
  // The form fields of the last refund request.
  [[nodiscard]] std::map<std::string, std::string> last_refund_form() const;
  // SPEC §16: the intents whose metadata.paymentNo is `payment_no` (a create under another key
  // makes another one); the first one's status read as a trade state, and paid (succeeded).
  [[nodiscard]] int intent_count(const std::string& payment_no) const;
  [[nodiscard]] FakeTradeState trade_state(const std::string& payment_no) const override;
  void pay(const std::string& payment_no) override;

 private:
  [[nodiscard]] ServerResponse handle(const ServerRequest& request);
  [[nodiscard]] ServerResponse search(const std::map<std::string, std::string>& params);
  [[nodiscard]] ServerResponse refund_request(const ServerRequest& request);
  // A new refund for `form` (no Idempotency-Key seen before): made, or refused.
  [[nodiscard]] ServerResponse new_refund(const std::string& key,
                                          const std::map<std::string, std::string>& form);
  [[nodiscard]] ServerResponse list(const std::map<std::string, std::string>& params);
  // POST /v1/payment_intents (idempotent) and the cancel.
  [[nodiscard]] ServerResponse create_intent(const ServerRequest& request);
  [[nodiscard]] ServerResponse new_intent(const std::map<std::string, std::string>& form);
  [[nodiscard]] ServerResponse cancel_intent(const std::string& intent_id);
  void add_transaction(nlohmann::json transaction);

  std::string api_key_;
  mutable std::mutex stripe_mutex_;
  std::multimap<std::string, FakeIntent> intents_;  // by paymentNo
  // Idempotency-Key → the form it came with and the answer Stripe saved for it.
  std::map<std::string, std::pair<std::map<std::string, std::string>, ServerResponse>> keys_;
  std::map<std::string, std::string> refunded_;  // intent id → refund id
  std::vector<nlohmann::json> transactions_;
  std::vector<std::string> bill_requests_;
  std::map<std::string, std::string> last_refund_form_;
  std::unique_ptr<TestHttpServer> server_;  // last: its thread calls handle()
};

}  // namespace seatflow::testing

// The fake hmac bill endpoint: answers by date, signed like the gateway.
#include "support/fake_hmac_bill.hpp"

namespace seatflow::testing {

FakeHmacBill::FakeHmacBill(std::string secret) : secret_(std::move(secret)) {
  server_ = std::make_unique<TestHttpServer>(
      [this](const ServerRequest& request) {
        const std::string prefix(channels::kHmacBillPath);
        if (request.method != "GET" || request.target.rfind(prefix, 0) != 0) {
          return ServerResponse{404, {}, "not found"};
        }
        const auto date = request.target.substr(prefix.size());
        const std::lock_guard lock(mutex_);
        const auto it = answers_.find(date);
        if (it == answers_.end()) {
          return ServerResponse{404, {}, "no bill"};
        }
        ServerResponse response{it->second.status, {{"Content-Type", "text/csv"}}, it->second.body};
        if (!it->second.signature.empty()) {
          response.headers.emplace_back("X-Bill-Signature", it->second.signature);
        }
        response.delay_ms = delay_ms_;
        return response;
      },
      false);
}

void FakeHmacBill::set_delay_ms(int delay_ms) {
  const std::lock_guard lock(mutex_);
  delay_ms_ = delay_ms;
}

std::string FakeHmacBill::url() const {
  return server_->base_url();
}

std::string FakeHmacBill::sign(const std::string& body) const {
  return channels::hmac_bill_signature(secret_, body);
}

void FakeHmacBill::set_bill(const std::string& date,
                            const std::vector<channels::HmacBillEntry>& entries) {
  auto body = channels::hmac_bill_csv(entries);
  auto signature = sign(body);
  set_answer(date, 200, std::move(body), std::move(signature));
}

void FakeHmacBill::set_answer(const std::string& date, int status, std::string body,
                              std::string signature) {
  const std::lock_guard lock(mutex_);
  answers_[date] = {status, std::move(body), std::move(signature)};
}

int FakeHmacBill::requests() const {
  return server_->requests();
}

std::int64_t shanghai_ms(const std::string& date, int hour, int minute) {
  const auto midnight_utc = channels::parse_utc_ms(date + "T00:00:00Z");
  return *midnight_utc + ((hour - 8) * 60LL + minute) * 60'000;
}

}  // namespace seatflow::testing

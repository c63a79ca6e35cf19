// A fake hmac gateway's bill endpoint on loopback HTTP (SPEC §13): GET /api/gateway/bills/<date>
// answers the bill a test set for that date, signed with the gateway's secret as the real one
// signs it, 404 for a date without one; a test can also set any answer (a wrong signature, a row
// that does not parse, 425 not ready) and stall every answer.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "channels/hmac/hmac_bill.hpp"
#include "support/test_http_server.hpp"

namespace seatflow::testing {

class FakeHmacBill {
 public:
  explicit FakeHmacBill(std::string secret);
  // "http://127.0.0.1:<port>": the gateway's base URL.
  [[nodiscard]] std::string url() const;
  // The day's bill: these entries as CSV, signed.
  void set_bill(const std::string& date, const std::vector<channels::HmacBillEntry>& entries);
  // Any answer for the day: its status, body and X-Bill-Signature (none when empty).
  void set_answer(const std::string& date, int status, std::string body, std::string signature);
  // Every answer from now on waits this long before it is written (a stalled gateway).
  void set_delay_ms(int delay_ms);
  // A CSV body signed with the secret (a body a test wrote itself).
  [[nodiscard]] std::string sign(const std::string& body) const;
  [[nodiscard]] int requests() const;

 private:
  struct Answer {
    int status = 200;
    std::string body;
    std::string signature;
  };
  std::string secret_;
  mutable std::mutex mutex_;
  std::map<std::string, Answer> answers_;
  int delay_ms_ = 0;
  std::unique_ptr<TestHttpServer> server_;
};

// Unix ms of a wall-clock time in UTC+8 (Asia/Shanghai, which has had no DST since 1991):
// shanghai_ms("2026-11-20", 10, 0) is 2026-11-20T02:00:00Z.
[[nodiscard]] std::int64_t shanghai_ms(const std::string& date, int hour, int minute);

}  // namespace seatflow::testing

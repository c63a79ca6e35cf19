// Fake WeChat Pay and Alipay bill servers on loopback HTTPS (the test CA) that serve SPEC §13's
// two-step exchange from bills set per date, in the gateways' real formats (bill_files.hpp), with
// keys made at test time. For the dialect, runner and CLI tests:
//
//   FakeWechatBillServer wechat(mchid, merchant_serial, merchant_key, platform_serial,
//   platform_key); wechat.set_bill("2026-12-01", {{false, "4200…01", "P-1", "", 5000, 30}});
//   // SEATFLOW_WECHAT_GATEWAY_URL = wechat.url(); a run of 2026-12-01 then reads one payment row.
//
// WeChat Pay: GET /v3/bill/tradebill?bill_date=D&bill_type=ALL&tar_type=GZIP, the merchant's
// signature checked (401 otherwise), answered signed by the platform key with hash_type SHA1, the
// bill's hash_value and download_url = url() + "/v3/billdownload/file?token=D"; that GET (signed
// too) answers the gzip, unsigned as WeChat Pay's is. A date without a bill: 400
// NO_STATEMENT_EXIST. Alipay: POST /gateway.do, method
// alipay.data.dataservice.bill.downloadurl.query (RSA2 checked: isv.invalid-signature otherwise),
// answered signed with bill_download_url = url's origin + "/downloadBillFile.resource?…&token=D";
// that GET answers the zip (GBK names and content). A date without a bill: 40004
// isp.bill_not_exist.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "support/bill_files.hpp"
#include "support/test_http_server.hpp"
#include "support/test_keys.hpp"

namespace seatflow::testing {

// How a fake bill server answers.
enum class FakeBillMode : std::uint8_t {
  honest,      // the bill as set, whole
  wrong_hash,  // wechat: hash_value is the SHA-1 of other bytes
  bad_total,   // the summary's (wechat) or 交易合计's (alipay) count one more than the rows
  not_ready,   // wechat: 400 STATEMENT_CREATING; alipay: isp.bill_not_exist for every date
  corrupt,     // wechat: the gzip cut in half; alipay: the entry's CRC-32 off by one
};

// The bills by date, the mode and the counts, shared by both servers.
class FakeBillBook {
 public:
  void set_bill(const std::string& date, std::vector<FakeBillRow> rows);
  void set_mode(FakeBillMode mode);
  // Requests for a bill (the first step) and downloads (the second) answered so far.
  [[nodiscard]] int bill_requests() const;
  [[nodiscard]] int downloads() const;
  // Requests refused because the merchant's signature did not verify.
  [[nodiscard]] int refused_signatures() const;

 protected:
  [[nodiscard]] bool bill(const std::string& date, std::vector<FakeBillRow>* rows) const;
  [[nodiscard]] FakeBillMode mode() const;
  void count_bill_request();
  void count_download();
  void count_refused();

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<FakeBillRow>> bills_;
  FakeBillMode mode_ = FakeBillMode::honest;
  int bill_requests_ = 0;
  int downloads_ = 0;
  int refused_ = 0;
};

class FakeWechatBillServer : public FakeBillBook {
 public:
  FakeWechatBillServer(std::string mchid, std::string merchant_serial,
                       const TestKeyPair& merchant_key, std::string platform_serial,
                       const TestKeyPair& platform_key);
  // https://127.0.0.1:<port>: SEATFLOW_WECHAT_GATEWAY_URL
  [[nodiscard]] std::string url() const { return server_->base_url(); }

 private:
  [[nodiscard]] ServerResponse handle(const ServerRequest& request);
  [[nodiscard]] bool authorized(const ServerRequest& request) const;
  [[nodiscard]] ServerResponse signed_answer(int status, std::string body) const;
  [[nodiscard]] ServerResponse tradebill(const std::string& date);
  [[nodiscard]] ServerResponse download(const std::string& date);

  std::string mchid_;
  std::string merchant_serial_;
  const TestKeyPair& merchant_key_;
  std::string platform_serial_;
  const TestKeyPair& platform_key_;
  std::unique_ptr<TestHttpServer> server_;  // last: its thread calls handle()
};

class FakeAlipayBillServer : public FakeBillBook {
 public:
  FakeAlipayBillServer(std::string app_id, const TestKeyPair& merchant_key,
                       const TestKeyPair& alipay_key);
  // https://127.0.0.1:<port>/gateway.do: SEATFLOW_ALIPAY_GATEWAY_URL
  [[nodiscard]] std::string url() const { return server_->base_url() + "/gateway.do"; }

 private:
  [[nodiscard]] ServerResponse handle(const ServerRequest& request);
  [[nodiscard]] std::string url_member(const std::string& date);
  [[nodiscard]] ServerResponse download(const std::string& date);

  std::string app_id_;
  const TestKeyPair& merchant_key_;
  const TestKeyPair& alipay_key_;
  std::unique_ptr<TestHttpServer> server_;  // last: its thread calls handle()
};

}  // namespace seatflow::testing

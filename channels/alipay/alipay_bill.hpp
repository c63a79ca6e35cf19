// The `alipay` bill dialect (SPEC §13): alipay.data.dataservice.bill.downloadurl.query
// (biz_content {"bill_type":"trade","bill_date"}) signed like the query, its answer's sign
// verified like the query's; then a GET of bill_download_url (a short-lived link that carries its
// own token) → a zip whose entry named …_业务明细.csv (name and content GBK) is the bill that
// AlipayBillReader reads. Alipay answers a day it has no bill for with sub_code
// isp.bill_not_exist (its docs list BILL_NOT_EXIST; both are taken), before the bill is made as
// after a day without trades: until kAlipayBillReadyAfterMs past the day's end it is not_ready,
// after that no_bill.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "channels/alipay/alipay_query.hpp"
#include "channels/bill.hpp"

namespace seatflow::channels {

inline constexpr std::string_view kAlipayBillMethod =
    "alipay.data.dataservice.bill.downloadurl.query";
inline constexpr std::string_view kAlipayBillResponseMember =
    "alipay_data_dataservice_bill_downloadurl_query_response";
inline constexpr std::string_view kAlipayBillType = "trade";
// The zip entry that holds the rows (the other, …_业务明细(汇总).csv, the day's summary).
inline constexpr std::string_view kAlipayBillEntrySuffix = "_业务明细.csv";
inline constexpr std::string_view kAlipayBillNotExist = "isp.bill_not_exist";
inline constexpr std::string_view kAlipayBillNotExistDocumented = "BILL_NOT_EXIST";
// Alipay makes a day's bill by 09:00 the next day ("当日数据一般于次日 9 点前生成"): a "no bill"
// answer before noon of the next day (China time) is taken as not made yet.
inline constexpr std::int64_t kAlipayBillReadyAfterMs = 12LL * 3600 * 1000;
// bill_download_url is at most this long (the docs: String(2048)).
inline constexpr std::size_t kAlipayDownloadUrlBytesMax = 2048;

// The params of the downloadurl query (without `sign`), in the order they are sent.
[[nodiscard]] FormParams alipay_bill_params(std::string_view app_id, std::string_view date,
                                            std::int64_t now_ms);

// The rows of a downloaded bill (the zip body) to `sink`: the one entry whose name (GBK, or UTF-8
// when the entry says so) ends in kAlipayBillEntrySuffix, CRC-checked, within `limits`, its GBK
// lines read by AlipayBillReader. Exposed for tests and benchmarks.
[[nodiscard]] Result<BillSummary> alipay_bill_rows(std::string_view zip_body,
                                                   const BillLimits& limits, BillRowSink& sink);

class AlipayBill final : public BillDialect {
 public:
  // The query's configuration: the same app, gateway and keys. Throws as AlipayQuery does.
  explicit AlipayBill(AlipayQueryConfig config);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::alipay; }
  // Throws std::invalid_argument for a date that is not YYYY-MM-DD, std::runtime_error when
  // OpenSSL cannot sign.
  [[nodiscard]] net::Request bill_request(const BillDay& day, std::int64_t now_ms) const override;
  [[nodiscard]] Result<BillStep> step(const BillDay& day, const BillLimits& limits,
                                      BillCursor& cursor, const net::Response& response,
                                      BillRowSink& sink, std::int64_t now_ms) const override;

 private:
  [[nodiscard]] Result<BillStep> url_answer(const BillDay& day, const net::Response& response,
                                            std::int64_t now_ms) const;

  AlipayQueryConfig config_;
};

}  // namespace seatflow::channels

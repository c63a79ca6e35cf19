// The `wechat` bill dialect (SPEC §13): GET /v3/bill/tradebill?bill_date=&bill_type=ALL&
// tar_type=GZIP signed like the query, its answer verified with the platform key like the query's
// ({"hash_type":"SHA1","hash_value","download_url"}); then a signed GET of download_url, whose
// answer WeChat Pay does not sign ("由于下载账单微信不返回签名头信息", the v3 FAQ
// https://pay.weixin.qq.com/doc/v3/merchant/4013071254): the gzip's uncompressed bill must hash to
// the verified hash_value instead. Error NO_STATEMENT_EXIST = no bill (a day without trades),
// STATEMENT_CREATING = not ready.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "channels/bill.hpp"
#include "channels/wechat/wechat_query.hpp"

namespace seatflow::channels {

inline constexpr std::string_view kWechatTradeBillPath = "/v3/bill/tradebill";
inline constexpr std::string_view kWechatNoStatement = "NO_STATEMENT_EXIST";
inline constexpr std::string_view kWechatStatementCreating = "STATEMENT_CREATING";
// download_url is at most this long (the v3 docs: string(2048)).
inline constexpr std::size_t kWechatDownloadUrlBytesMax = 2048;

// The rows of a downloaded bill (the gzip body) to `sink`: its uncompressed bytes must hash (SHA-1)
// to `sha1_hex`, parse as WechatBillReader reads them, and stay within `limits`. Exposed for tests
// and benchmarks.
[[nodiscard]] Result<BillSummary> wechat_bill_rows(std::string_view gzip_body,
                                                   std::string_view sha1_hex,
                                                   const BillLimits& limits, BillRowSink& sink);

class WechatBill final : public BillDialect {
 public:
  // The query's configuration: the same merchant, gateway and keys. Throws as WechatQuery does.
  explicit WechatBill(WechatQueryConfig config);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::wechat; }
  // Throws std::invalid_argument for a date that is not YYYY-MM-DD, std::runtime_error when
  // OpenSSL cannot sign.
  [[nodiscard]] net::Request bill_request(const BillDay& day, std::int64_t now_ms) const override;
  [[nodiscard]] Result<BillStep> step(const BillDay& day, const BillLimits& limits,
                                      BillCursor& cursor, const net::Response& response,
                                      BillRowSink& sink, std::int64_t now_ms) const override;

  // The request target of the tradebill API for `date`.
  [[nodiscard]] std::string target_for(std::string_view date) const;

 private:
  [[nodiscard]] Result<BillStep> tradebill_answer(const net::Response& response, BillCursor& cursor,
                                                  std::int64_t now_ms) const;
  [[nodiscard]] net::Request signed_get(net::Url url, std::int64_t now_ms) const;

  WechatQueryConfig config_;
};

}  // namespace seatflow::channels

// Unit tests for the `alipay` bill dialect (SPEC §13): the signed downloadurl query, its verified
// answer (next, not ready then no bill, refusals), and step() on real-format zips built by hand at
// test time with GBK names and content: rows, a refund, fees, a 交易合计 that does not agree, a row
// that does not parse, a CRC mismatch, the row and byte limits.
#include "channels/alipay/alipay_bill.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "channels/alipay/alipay_bill_reader.hpp"
#include "codec/crypto.hpp"
#include "codec/digest.hpp"
#include "codec/text.hpp"
#include "support/bill_files.hpp"
#include "support/rejections.hpp"
#include "support/test_keys.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::FakeBillFlaws;
using testing::FakeBillRow;
using testing::RecordingBillSink;
using testing::rejection_detail;
using testing::test_key;

const std::string kAppId = "2021000000000001";
// 2026-11-30 in China time: [2026-11-29 16:00, 2026-11-30 16:00) UTC.
const BillDay kDay{"2026-11-30", 1'795'968'000'000, 1'796'054'400'000};
constexpr std::int64_t kNextMorning = 1'796'054'400'000 + 10LL * 3600 * 1000;  // 10:00 next day
constexpr std::int64_t kNextEvening = 1'796'054'400'000 + 18LL * 3600 * 1000;

AlipayBill make_bill() {
  return AlipayBill(AlipayQueryConfig{
      kAppId, net::parse_url("https://openapi.alipay.test/gateway.do").value(),
      test_key("alipay-query-merchant").private_key, test_key("alipay").public_key});
}

net::Response signed_member(const std::string& member) {
  const std::string sign =
      codec::base64_encode(codec::rsa_sha256_sign(test_key("alipay").private_key.get(), member));
  net::Response response;
  response.status = 200;
  response.body = "{\"" + std::string(kAlipayBillResponseMember) + "\":" + member + ",\"sign\":\"" +
                  sign + "\"}";
  return response;
}

const std::vector<FakeBillRow> kRows = {
    {false, "2026113022001400000000000001", "P-1", "", 5000, -30, "2026-11-30 10:00:01"},
    {false, "2026113022001400000000000002", "P-2", "", 1999, 0, "2026-11-30 11:00:00"},
    {true, "2026113022001400000000000001", "P-1", "R-1", 5000, 30, "2026-11-30 12:00:00"},
};

Result<BillSummary> read_zip(const std::string& zip, RecordingBillSink& sink,
                             const BillLimits& limits = {}) {
  return alipay_bill_rows(zip, limits, sink);
}

FakeBillFlaws flaws_with_count(std::int64_t count) {
  FakeBillFlaws flaws;
  flaws.count = count;
  return flaws;
}

std::string bill_zip(const FakeBillFlaws& flaws = {}, bool wrong_crc = false) {
  return testing::alipay_bill_zip("20261130", testing::alipay_bill_text(kRows, flaws), wrong_crc);
}

TEST(AlipayBill, RequestIsTheSignedDownloadurlQueryOfTheDay) {
  const auto request = make_bill().bill_request(kDay, kNextMorning);
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url.target, "/gateway.do");
  const auto params = alipay_bill_params(kAppId, kDay.date, kNextMorning);
  std::string biz;
  for (const auto& [key, value] : params) {
    biz = key == "biz_content" ? value : biz;
  }
  EXPECT_EQ(nlohmann::json::parse(biz),
            (nlohmann::json{{"bill_type", "trade"}, {"bill_date", "2026-11-30"}}));
  EXPECT_NE(request.body.find("method=alipay.data.dataservice.bill.downloadurl.query"),
            std::string::npos);
  EXPECT_NE(request.body.find("&sign="), std::string::npos);
}

TEST(AlipayBill, AVerifiedAnswerLeadsToTheDownload) {
  BillCursor cursor;
  RecordingBillSink sink;
  const auto step = make_bill().step(
      kDay, {}, cursor,
      signed_member(
          R"({"code":"10000","msg":"Success","bill_download_url":"http://dwbillcenter.alipay.test/downloadBillFile.resource?bizType=trade&fileId=1"})"),
      sink, kNextMorning);
  ASSERT_TRUE(step.ok()) << step.detail();
  ASSERT_EQ(step.value().kind, BillStep::Kind::next);
  EXPECT_EQ(step.value().next->method, "GET");
  EXPECT_EQ(step.value().next->url.host, "dwbillcenter.alipay.test");
  EXPECT_EQ(step.value().next->url.target, "/downloadBillFile.resource?bizType=trade&fileId=1");
}

TEST(AlipayBill, BillNotExistIsNotReadyUntilNoonOfTheNextDayThenNoBill) {
  for (const char* sub_code : {"isp.bill_not_exist", "BILL_NOT_EXIST"}) {
    const std::string member =
        std::string(R"({"code":"40004","msg":"Business Failed","sub_code":")") + sub_code +
        R"(","sub_msg":"账单不存在"})";
    RecordingBillSink sink;
    BillCursor morning;
    const auto early =
        make_bill().step(kDay, {}, morning, signed_member(member), sink, kNextMorning);
    ASSERT_TRUE(early.ok()) << early.detail();
    EXPECT_EQ(early.value().kind, BillStep::Kind::not_ready) << sub_code;
    BillCursor evening;
    const auto late =
        make_bill().step(kDay, {}, evening, signed_member(member), sink, kNextEvening);
    ASSERT_TRUE(late.ok()) << late.detail();
    EXPECT_EQ(late.value().kind, BillStep::Kind::no_bill) << sub_code;
  }
}

TEST(AlipayBill, RefusesAnswersThatProveNothing) {
  auto forged =
      signed_member(R"({"code":"10000","msg":"Success","bill_download_url":"https://x"})");
  forged.body.replace(forged.body.find("https://x"), 9, "https://y");
  const std::vector<std::pair<net::Response, std::string>> cases = {
      {forged, "signature"},
      {signed_member(
           R"({"code":"40004","msg":"Business Failed","sub_code":"isv.invalid-arguments"})"),
       "sub_code isv.invalid-arguments"},
      {signed_member(R"({"code":"10000","msg":"Success"})"), "bill_download_url"},
      {signed_member(R"({"code":"10000","msg":"Success","bill_download_url":"ftp://x/y"})"),
       "bill_download_url"},
  };
  for (const auto& [response, expected] : cases) {
    BillCursor cursor;
    RecordingBillSink sink;
    const auto step = make_bill().step(kDay, {}, cursor, response, sink, kNextMorning);
    ASSERT_FALSE(step.ok()) << expected;
    EXPECT_NE(rejection_detail(step).find(expected), std::string::npos) << step.detail();
  }
}

TEST(AlipayBill, ReadsTheGbkDetailEntryPaymentsRefundsAndFees) {
  RecordingBillSink sink;
  const auto summary = read_zip(bill_zip(), sink);
  ASSERT_TRUE(summary.ok()) << summary.detail();
  EXPECT_EQ(summary.value().rows, 3U);
  const auto csv = codec::utf8_to_gbk(testing::alipay_bill_text(kRows));
  ASSERT_TRUE(csv);
  EXPECT_EQ(summary.value().sha256, codec::sha256_hex(*csv)) << "the hash of the GBK file";
  ASSERT_EQ(sink.rows.size(), 3U);
  EXPECT_EQ(sink.rows[0].kind, BillRowKind::payment);
  EXPECT_EQ(sink.rows[0].trade_no, "2026113022001400000000000001") << "the tab is trimmed";
  EXPECT_EQ(sink.rows[0].payment_no, "P-1");
  EXPECT_EQ(sink.rows[0].amount_cents, 5000);
  EXPECT_EQ(sink.rows[0].fee_cents, 30) << "a charged fee, whatever sign the file writes";
  EXPECT_EQ(sink.rows[0].completed_at_ms, 1'796'004'001'000);
  EXPECT_EQ(sink.rows[1].amount_cents, 1999);
  EXPECT_EQ(sink.rows[2].kind, BillRowKind::refund);
  EXPECT_EQ(sink.rows[2].refund_no, "R-1");
  EXPECT_EQ(sink.rows[2].amount_cents, 5000) << "a refund's negative amount as positive cents";
  EXPECT_EQ(sink.rows[2].fee_cents, -30) << "the fee given back";
}

TEST(AlipayBill, TheDownloadStepReadsTheZip) {
  net::Response download;
  download.status = 200;
  download.body = bill_zip();
  BillCursor cursor{1, 0, 0, {}};
  RecordingBillSink sink;
  const auto step = make_bill().step(kDay, {}, cursor, download, sink, kNextMorning);
  ASSERT_TRUE(step.ok()) << step.detail();
  EXPECT_EQ(step.value().kind, BillStep::Kind::done);
  EXPECT_EQ(step.value().summary.rows, 3U);
  download.status = 404;
  BillCursor missing{1, 0, 0, {}};
  EXPECT_FALSE(make_bill().step(kDay, {}, missing, download, sink, kNextMorning).ok());
}

TEST(AlipayBill, RefusesATradeTotalThatDoesNotAgree) {
  RecordingBillSink sink;
  const auto count = read_zip(bill_zip(flaws_with_count(3)), sink);
  ASSERT_FALSE(count.ok());
  EXPECT_NE(rejection_detail(count).find("count (3) is not the rows read (2)"), std::string::npos)
      << count.detail();
  FakeBillFlaws no_total;
  no_total.no_summary = true;
  RecordingBillSink cut;
  const auto missing = read_zip(bill_zip(no_total), cut);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(rejection_detail(missing).find("#交易合计"), std::string::npos);
  std::string text = testing::alipay_bill_text(kRows);
  text.replace(text.find("商家实收共69.99元"), std::string("商家实收共69.99元").size(),
               "商家实收共69.98元");
  RecordingBillSink amounts;
  const auto amount = read_zip(testing::alipay_bill_zip("20261130", text), amounts);
  ASSERT_FALSE(amount.ok());
  EXPECT_NE(rejection_detail(amount).find("商家实收"), std::string::npos) << amount.detail();
}

TEST(AlipayBill, RefusesARowThatDoesNotParse) {
  for (const std::string raw :
       {"2026113022001400000000000009\t,P-9\t,冻结\t,x,2026-11-30 10:00:00,2026-11-30 "
        "10:00:00,\t,\t,\t,\t,x\t,1.00,1.00,0.00,0.00,0.00,0.00,0.00,,0.00\t,0.00,\t,0.00,0.00,",
        "only,three,fields"}) {
    FakeBillFlaws flaws;
    flaws.raw_row = raw;
    RecordingBillSink sink;
    const auto read = read_zip(bill_zip(flaws), sink);
    ASSERT_FALSE(read.ok()) << raw;
    EXPECT_NE(rejection_detail(read).find("row 4"), std::string::npos) << read.detail();
  }
}

TEST(AlipayBill, RefusesACrcMismatchAZipWithoutTheEntryAndTheLimits) {
  RecordingBillSink sink;
  const auto crc = read_zip(bill_zip({}, true), sink);
  ASSERT_FALSE(crc.ok());
  EXPECT_NE(rejection_detail(crc).find("checksum"), std::string::npos) << crc.detail();
  RecordingBillSink other;
  const auto none =
      read_zip(testing::zip_archive(
                   {{"20880000000000000156_20261130_other.csv", "x", true, false, false, {}}}),
               other);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(rejection_detail(none).find("no _业务明细.csv entry"), std::string::npos);
  RecordingBillSink rows;
  const auto too_many = read_zip(bill_zip(), rows, BillLimits{1 << 20, 2});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(rejection_detail(too_many).find("SEATFLOW_BILL_ROWS_MAX"), std::string::npos);
  RecordingBillSink bytes;
  const auto too_large = read_zip(bill_zip(), bytes, BillLimits{100, 10});
  ASSERT_FALSE(too_large.ok());
  EXPECT_NE(rejection_detail(too_large).find("SEATFLOW_BILL_BYTES_MAX"), std::string::npos);
}

TEST(AlipayBill, ReadsAUtf8FlaggedEntryName) {
  const auto gbk = codec::utf8_to_gbk(testing::alipay_bill_text(kRows));
  ASSERT_TRUE(gbk);
  RecordingBillSink sink;
  const auto read = read_zip(
      testing::zip_archive({{"2088_20261130_业务明细.csv", *gbk, true, true, false, {}}}), sink);
  ASSERT_TRUE(read.ok()) << read.detail();
  EXPECT_EQ(sink.rows.size(), 3U);
}

TEST(AlipayTotal, ReadsTheCountAndTheAmountOfAClosingLine) {
  const auto total = parse_alipay_total("6笔，商家实收共0.06元，商家优惠共0.00元", "商家实收共");
  ASSERT_TRUE(total);
  EXPECT_EQ(total->count, 6);
  EXPECT_EQ(total->amount_cents, 6);
  const auto refunds = parse_alipay_total("4笔，商家实收退款共-0.04元", "商家实收退款共");
  ASSERT_TRUE(refunds);
  EXPECT_EQ(refunds->amount_cents, -4);
  EXPECT_FALSE(parse_alipay_total("x笔", "商家实收共"));
  EXPECT_FALSE(parse_alipay_total("2笔，商家实收共abc元", "商家实收共"));
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

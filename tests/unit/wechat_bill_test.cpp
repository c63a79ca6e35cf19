// Unit tests for the `wechat` bill dialect (SPEC §13): the signed tradebill request, its verified
// answer (next, not ready, no bill, refusals), and step() on real-format gzip bills built at test
// time: the right and a wrong SHA-1, a total that does not agree, a row that does not parse, the
// row and byte limits, a refund row, fee sums, a truncated download.
#include "channels/wechat/wechat_bill.hpp"

#include <gtest/gtest.h>

#include <limits>

#include <nlohmann/json.hpp>

#include "channels/bill_lines.hpp"
#include "channels/gateway_signer.hpp"
#include "codec/stream_digest.hpp"
#include "support/bill_files.hpp"
#include "support/fake_gateways.hpp"
#include "support/test_keys.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::FakeBillFlaws;
using testing::FakeBillRow;
using testing::RecordingBillSink;
using testing::rejection_detail;
using testing::test_key;

constexpr std::int64_t kNow = 1'796'090'400'000;  // 2026-12-01 10:00 China time
const std::string kMchid = "1900000001";
const std::string kMerchantSerial = "3775B6A45ACD588826D15E583A95F5DD";
const std::string kPlatformSerial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";
const BillDay kDay{"2026-11-30", 1'795'968'000'000, 1'796'054'400'000};

WechatBill make_bill() {
  return WechatBill(WechatQueryConfig{kMchid,
                                      net::parse_url("https://api.mch.weixin.test/").value(),
                                      test_key("wechat-query-merchant").private_key,
                                      kMerchantSerial,
                                      {{kPlatformSerial, test_key("wechat").public_key}}});
}

net::Response signed_response(int status, std::string body) {
  const auto headers =
      wechat_sign(body, kPlatformSerial, kNow / 1000, test_key("wechat").private_key.get());
  net::Response response;
  response.status = status;
  response.body = std::move(body);
  response.headers = {{"wechatpay-timestamp", headers.timestamp},
                      {"wechatpay-nonce", headers.nonce},
                      {"wechatpay-signature", headers.signature},
                      {"wechatpay-serial", headers.serial}};
  return response;
}

std::string sha1_of(std::string_view text) {
  codec::StreamDigest digest(codec::StreamDigest::Algorithm::sha1);
  digest.update(text);
  return digest.hex();
}

std::string sha256_of(std::string_view text) {
  codec::StreamDigest digest(codec::StreamDigest::Algorithm::sha256);
  digest.update(text);
  return digest.hex();
}

const std::vector<FakeBillRow> kRows = {
    {false, "4200000001202611300000000001", "P-1", "", 5000, 30000, "2026-11-30 10:00:00"},
    {false, "4200000001202611300000000002", "P-2", "", 1, 6, "2026-11-30 11:30:00"},
    {true, "4200000001202611300000000001", "P-1", "R-1", 5000, -30000, "2026-11-30 12:00:00"},
};

FakeBillFlaws flaws_with_count(std::int64_t count) {
  FakeBillFlaws flaws;
  flaws.count = count;
  return flaws;
}

Result<BillSummary> read_bill(const std::string& text, RecordingBillSink& sink,
                              const BillLimits& limits = {}, std::string sha1 = {}) {
  return wechat_bill_rows(testing::gzip_bytes(text), sha1.empty() ? sha1_of(text) : sha1, limits,
                          sink);
}

TEST(WechatBill, RequestIsTheSignedTradebillGetOfTheDay) {
  const auto request = make_bill().bill_request(kDay, kNow);
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.url.host, "api.mch.weixin.test");
  EXPECT_EQ(request.url.target,
            "/v3/bill/tradebill?bill_date=2026-11-30&bill_type=ALL&tar_type=GZIP");
  ASSERT_FALSE(request.headers.empty());
  const auto fields = testing::parse_wechat_authorization(request.headers.front().second);
  ASSERT_TRUE(fields);
  EXPECT_EQ(fields->at("mchid"), kMchid);
  EXPECT_THROW((void)make_bill().bill_request(BillDay{"2026-11-3x", 0, 0}, kNow),
               std::invalid_argument);
}

TEST(WechatBill, AVerifiedAnswerLeadsToASignedDownload) {
  BillCursor cursor;
  RecordingBillSink sink;
  const std::string hash(40, 'A');
  const auto step = make_bill().step(
      kDay, {}, cursor,
      signed_response(200, nlohmann::json{{"hash_type", "SHA1"},
                                          {"hash_value", hash},
                                          {"download_url",
                                           "https://api.mch.weixin.test/v3/billdownload/"
                                           "file?token=T1"}}
                               .dump()),
      sink, kNow);
  ASSERT_TRUE(step.ok()) << step.detail();
  ASSERT_EQ(step.value().kind, BillStep::Kind::next);
  ASSERT_TRUE(step.value().next);
  EXPECT_EQ(step.value().next->url.target, "/v3/billdownload/file?token=T1");
  EXPECT_TRUE(testing::parse_wechat_authorization(step.value().next->headers.front().second));
  EXPECT_EQ(cursor.state, std::string(40, 'a'));
  EXPECT_EQ(cursor.step, 1);
}

TEST(WechatBill, NoStatementIsNoBillAndStatementCreatingIsNotReady) {
  RecordingBillSink sink;
  BillCursor first;
  const auto none = make_bill().step(
      kDay, {}, first,
      signed_response(400, R"({"code":"NO_STATEMENT_EXIST","message":"请求的账单文件不存在"})"),
      sink, kNow);
  ASSERT_TRUE(none.ok()) << none.detail();
  EXPECT_EQ(none.value().kind, BillStep::Kind::no_bill);
  BillCursor second;
  const auto creating = make_bill().step(
      kDay, {}, second,
      signed_response(400, R"({"code":"STATEMENT_CREATING","message":"账单生成中"})"), sink, kNow);
  ASSERT_TRUE(creating.ok()) << creating.detail();
  EXPECT_EQ(creating.value().kind, BillStep::Kind::not_ready);
}

TEST(WechatBill, RefusesAnswersThatProveNothing) {
  RecordingBillSink sink;
  const std::string good = nlohmann::json{{"hash_type", "SHA1"},
                                          {"hash_value", std::string(40, 'a')},
                                          {"download_url", "https://x.test/f?token=1"}}
                               .dump();
  auto unsigned_answer = signed_response(200, good);
  unsigned_answer.headers.clear();
  auto tampered = signed_response(200, good);
  tampered.body[tampered.body.size() - 3] = 'X';
  const std::vector<std::pair<net::Response, std::string>> cases = {
      {unsigned_answer, "answer signature"},
      {tampered, "answer signature"},
      {signed_response(200, R"({"hash_type":"MD5","hash_value":"x","download_url":"https://x"})"),
       "hash_type"},
      {signed_response(200, R"({"hash_type":"SHA1","hash_value":")" + std::string(40, 'a') +
                                R"(","download_url":"http://x.test/f"})"),
       "https"},
      {signed_response(500, R"({"code":"SYSTEM_ERROR","message":"x"})"), "code SYSTEM_ERROR"},
  };
  for (const auto& [response, expected] : cases) {
    BillCursor cursor;
    const auto step = make_bill().step(kDay, {}, cursor, response, sink, kNow);
    ASSERT_FALSE(step.ok()) << expected;
    EXPECT_NE(rejection_detail(step).find(expected), std::string::npos) << step.detail();
  }
}

TEST(WechatBill, ReadsPaymentsRefundsAndFeesOfAWholeBill) {
  const std::string text = testing::wechat_bill_text(kRows);
  RecordingBillSink sink;
  const auto summary = read_bill(text, sink);
  ASSERT_TRUE(summary.ok()) << summary.detail();
  EXPECT_EQ(summary.value().rows, 3U);
  EXPECT_EQ(summary.value().sha256, sha256_of(text));
  ASSERT_EQ(sink.rows.size(), 3U);
  const BillRow& paid = sink.rows[0];
  EXPECT_EQ(paid.kind, BillRowKind::payment);
  EXPECT_EQ(paid.trade_no, "4200000001202611300000000001");
  EXPECT_EQ(paid.payment_no, "P-1");
  EXPECT_EQ(paid.amount_cents, 5000);
  EXPECT_EQ(paid.fee_cents, 30);
  EXPECT_EQ(paid.completed_at_ms, 1'796'004'000'000);
  EXPECT_EQ(sink.rows[1].fee_cents, 0) << "0.00006 yuan rounds to no cent";
  const BillRow& refund = sink.rows[2];
  EXPECT_EQ(refund.kind, BillRowKind::refund);
  EXPECT_EQ(refund.refund_no, "R-1");
  EXPECT_EQ(refund.amount_cents, 5000);
  EXPECT_EQ(refund.fee_cents, -30);
}

// Found while writing fuzz_bill (its UBSan on a hand-made row; the seed wechat_lines_fee_bounds
// keeps it): a fee of 92233720368547.75807 yuan (INT64_MAX in 10^-5 yuan) parses, and
// rounding it to cents overflowed int64 (undefined behaviour: the asan+ubsan suite stops on it;
// the optimized Release build happened to print the right cents).
TEST(WechatBill, RoundsAFeeAtTheInt64BoundWithoutOverflow) {
  constexpr std::int64_t kMaxUnits = std::numeric_limits<std::int64_t>::max();
  const std::vector<FakeBillRow> rows = {
      {false, "4200000001202611300000000001", "P-1", "", 5000, kMaxUnits, "2026-11-30 10:00:00"},
      {true, "4200000001202611300000000001", "P-1", "R-1", 5000, -kMaxUnits, "2026-11-30 12:00:00"},
  };
  RecordingBillSink sink;
  const auto summary = read_bill(testing::wechat_bill_text(rows), sink);
  ASSERT_TRUE(summary.ok()) << summary.detail();
  ASSERT_EQ(sink.rows.size(), 2U);
  EXPECT_EQ(sink.rows[0].fee_cents, 9'223'372'036'854'776);  // …775.807 rounds up
  EXPECT_EQ(sink.rows[1].fee_cents, -9'223'372'036'854'776);
  EXPECT_EQ(fee_units_to_cents(1'499), 1);
  EXPECT_EQ(fee_units_to_cents(1'500), 2);
  EXPECT_EQ(fee_units_to_cents(-1'500), -2);
  EXPECT_EQ(fee_units_to_cents(std::numeric_limits<std::int64_t>::min()), -9'223'372'036'854'776);
}

TEST(WechatBill, TheDownloadStepChecksTheHashOfTheTradebillAnswer) {
  const std::string text = testing::wechat_bill_text(kRows);
  net::Response download;
  download.status = 200;
  download.body = testing::gzip_bytes(text);
  for (const bool right : {true, false}) {
    BillCursor cursor{1, 0, 0, right ? sha1_of(text) : sha1_of(text + "\n")};
    RecordingBillSink sink;
    const auto step = make_bill().step(kDay, {}, cursor, download, sink, kNow);
    if (right) {
      ASSERT_TRUE(step.ok()) << step.detail();
      EXPECT_EQ(step.value().kind, BillStep::Kind::done);
      EXPECT_EQ(step.value().summary.rows, 3U);
    } else {
      ASSERT_FALSE(step.ok());
      EXPECT_NE(rejection_detail(step).find("SHA-1"), std::string::npos) << step.detail();
    }
  }
}

TEST(WechatBill, RefusesASummaryThatDoesNotAgree) {
  RecordingBillSink sink;
  const auto count = read_bill(testing::wechat_bill_text(kRows, flaws_with_count(4)), sink);
  ASSERT_FALSE(count.ok());
  EXPECT_NE(rejection_detail(count).find("总交易单数"), std::string::npos) << count.detail();
  std::string text = testing::wechat_bill_text(kRows);
  const auto fee_total = text.find("`0.00006,`50.01");
  ASSERT_NE(fee_total, std::string::npos) << text;
  text.replace(fee_total, 8, "`0.00007");
  RecordingBillSink fees;
  const auto fee = read_bill(text, fees);
  ASSERT_FALSE(fee.ok());
  EXPECT_NE(rejection_detail(fee).find("手续费总金额"), std::string::npos) << fee.detail();
  RecordingBillSink cut;
  FakeBillFlaws no_summary;
  no_summary.no_summary = true;
  const auto missing = read_bill(testing::wechat_bill_text(kRows, no_summary), cut);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(rejection_detail(missing).find("summary"), std::string::npos);
}

TEST(WechatBill, RefusesARowThatDoesNotParse) {
  for (const std::string raw : {"`2026-11-30 13:00:00,`too,`few", "a row without backticks"}) {
    FakeBillFlaws flaws;
    flaws.raw_row = raw;
    RecordingBillSink sink;
    const auto read = read_bill(testing::wechat_bill_text(kRows, flaws), sink);
    ASSERT_FALSE(read.ok()) << raw;
    EXPECT_EQ(errc_of(read.failure().code), errc::rejected_answer);
  }
  std::string text = testing::wechat_bill_text(kRows);
  text.replace(text.find("`50.00,"), 7, "`5O.00,");
  RecordingBillSink sink;
  const auto amount = read_bill(text, sink);
  ASSERT_FALSE(amount.ok());
  EXPECT_NE(rejection_detail(amount).find("row 1"), std::string::npos) << amount.detail();
}

TEST(WechatBill, StopsAtTheRowAndByteLimits) {
  const std::string text = testing::wechat_bill_text(kRows);
  RecordingBillSink rows_sink;
  const auto rows = read_bill(text, rows_sink, BillLimits{1 << 20, 2});
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rejection_detail(rows).find("SEATFLOW_BILL_ROWS_MAX"), std::string::npos);
  RecordingBillSink bytes_sink;
  const auto bytes = read_bill(text, bytes_sink, BillLimits{text.size() - 1, 10});
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(rejection_detail(bytes).find("SEATFLOW_BILL_BYTES_MAX"), std::string::npos);
  RecordingBillSink exact;
  EXPECT_TRUE(read_bill(text, exact, BillLimits{text.size(), 3}).ok());
}

TEST(WechatBill, RefusesATruncatedDownloadAndPassesOnTheSinksFailure) {
  const std::string text = testing::wechat_bill_text(kRows);
  std::string gz = testing::gzip_bytes(text);
  gz.resize(gz.size() - 10);
  RecordingBillSink sink;
  const auto cut = wechat_bill_rows(gz, sha1_of(text), {}, sink);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(rejection_detail(cut).find("truncated"), std::string::npos) << cut.detail();
  RecordingBillSink failing;
  failing.fail_at = 1;
  const auto refused = read_bill(text, failing);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.detail(), "store refused");
}

TEST(WechatBill, ARevokedPaymentIsCountedButGivesNoRow) {
  std::string text = testing::wechat_bill_text(kRows);
  text.replace(text.find("`SUCCESS"), 8, "`REVOKED");
  RecordingBillSink sink;
  const auto read = read_bill(text, sink);
  ASSERT_TRUE(read.ok()) << read.detail();
  EXPECT_EQ(read.value().rows, 2U);
  EXPECT_EQ(sink.rows.front().payment_no, "P-2");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

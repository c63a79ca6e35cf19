// Unit tests for the bill readers' building blocks (SPEC §13): the exact yuan parser, decimals and
// China time, lines and CSV fields found by header name, the bounded gzip and zip readers (a zip
// bomb, a truncated gzip, a CRC mismatch, a GBK entry name) and GBK text.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "channels/bill.hpp"
#include "codec/bill_text.hpp"
#include "codec/inflate.hpp"
#include "codec/stream_digest.hpp"
#include "codec/text.hpp"
#include "codec/zip_reader.hpp"
#include "support/bill_files.hpp"

namespace seatflow::codec {
namespace {
namespace SEATFLOW_UNITY_ID {

using channels::yuan_to_cents;

// Everything a reader hands on, joined.
struct Collected {
  std::string bytes;
  ChunkSink sink() {
    return [this](std::string_view chunk) {
      bytes.append(chunk);
      return true;
    };
  }
};

TEST(YuanToCents, ReadsTheBillsAmountsExactly) {
  EXPECT_EQ(yuan_to_cents("12.34"), 1234);
  EXPECT_EQ(yuan_to_cents("0.01"), 1);
  EXPECT_EQ(yuan_to_cents("-0.01"), -1);
  EXPECT_EQ(yuan_to_cents("100"), 10000);
  EXPECT_EQ(yuan_to_cents("1.5"), 150);
  EXPECT_EQ(yuan_to_cents("+3.00"), 300);
  EXPECT_EQ(yuan_to_cents("0.00"), 0);
  // 0.1 + 0.2 in floating point is not 0.3; here every digit counts.
  EXPECT_EQ(yuan_to_cents("0.29"), 29);
  EXPECT_EQ(yuan_to_cents("19.99"), 1999);
}

TEST(YuanToCents, RefusesWhatIsNotYuanWithAtMostTwoDecimals) {
  for (const char* text : {"", "-", ".5", "1.", "1.234", "¥1.50", "1,000.00", " 1.00", "1.00 ",
                           "1e3", "0x10", "1.-1", "--1", "1..2", "NaN"}) {
    EXPECT_FALSE(yuan_to_cents(text)) << text;
  }
}

TEST(YuanToCents, RefusesAmountsBeyondInt64InsteadOfWrapping) {
  EXPECT_EQ(yuan_to_cents("92233720368547758.07"), std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(yuan_to_cents("92233720368547758.08"));
  EXPECT_FALSE(yuan_to_cents("92233720368547758.99"));
  EXPECT_FALSE(yuan_to_cents("99999999999999999999"));
  EXPECT_EQ(yuan_to_cents("-92233720368547758.07"), -std::numeric_limits<std::int64_t>::max());
}

TEST(DecimalUnits, ReadsWechatFeesInHundredThousandthsOfAYuan) {
  EXPECT_EQ(parse_decimal_units("0.00006", 5), 6);
  EXPECT_EQ(parse_decimal_units("-0.00006", 5), -6);
  EXPECT_EQ(parse_decimal_units("1.5", 5), 150000);
  EXPECT_EQ(parse_decimal_units("12", 0), 12);
  EXPECT_FALSE(parse_decimal_units("0.000006", 5));
  EXPECT_FALSE(parse_decimal_units("1.5", 0));
  EXPECT_FALSE(parse_decimal_units("1", 10));
}

TEST(ChinaTime, IsUtcPlusEightWithRealCalendarChecks) {
  EXPECT_EQ(parse_china_time_ms("1970-01-01 08:00:00"), 0);
  EXPECT_EQ(parse_china_time_ms("2026-12-01 10:00:00"), 1'796'090'400'000);
  EXPECT_EQ(parse_china_time_ms("2024-02-29 00:00:00"), 1'709'136'000'000);
  for (const char* text :
       {"2023-02-29 00:00:00", "2026-13-01 00:00:00", "2026-12-01 24:00:00", "2026-12-01T10:00:00",
        "2026-12-01 10:00", "2026-12-01 10:00:60", "2026-12-0a 10:00:00", ""}) {
    EXPECT_FALSE(parse_china_time_ms(text)) << text;
  }
}

TEST(LineSplitter, CutsLinesAcrossChunksAndDropsCarriageReturns) {
  LineSplitter splitter(16);
  std::vector<std::string> lines;
  const LineSink sink = [&](std::string_view line) {
    lines.emplace_back(line);
    return true;
  };
  ASSERT_TRUE(splitter.feed("ab\r\ncd", sink));
  ASSERT_TRUE(splitter.feed("ef\n\nlast", sink));
  ASSERT_TRUE(splitter.finish(sink));
  EXPECT_EQ(lines, (std::vector<std::string>{"ab", "cdef", "", "last"}));
}

TEST(LineSplitter, RefusesALineOverItsLimitEvenWithoutANewline) {
  LineSplitter splitter(8);
  const LineSink sink = [](std::string_view) { return true; };
  EXPECT_TRUE(splitter.feed("12345", sink));
  EXPECT_FALSE(splitter.feed("6789", sink));
  EXPECT_TRUE(splitter.too_long());
}

TEST(CsvLine, SplitsQuotedFieldsAndTrimsAlipayTabsAndWechatBackticks) {
  std::vector<std::string> fields;
  ASSERT_TRUE(split_csv_line("2026\t,\"a,b\",\"say \"\"hi\"\"\",`42,,", fields));
  EXPECT_EQ(fields, (std::vector<std::string>{"2026", "a,b", "say \"hi\"", "42", "", ""}));
  EXPECT_FALSE(split_csv_line("\"open", fields));
  EXPECT_FALSE(split_csv_line("\"a\"b,c", fields));
  EXPECT_FALSE(split_csv_line(std::string(kBillFieldsMax + 1, ','), fields));
}

TEST(BacktickLine, KeepsACommaInsideAField) {
  std::vector<std::string> fields;
  ASSERT_TRUE(split_backtick_line("`2026-12-01 10:00:00,`演出票,A区,`0.01,`", fields));
  EXPECT_EQ(fields, (std::vector<std::string>{"2026-12-01 10:00:00", "演出票,A区", "0.01", ""}));
  EXPECT_FALSE(split_backtick_line("no backtick,`x", fields));
}

TEST(CsvColumns, FindsColumnsByNameIgnoringTheYuanSuffixNeverByPosition) {
  const CsvColumns columns(
      {"\xEF\xBB\xBF支付宝交易号", " 订单金额（元） ", "商家实收(元)", "备注", "备注"});
  EXPECT_EQ(columns.find("支付宝交易号"), 0U);
  EXPECT_EQ(columns.find("订单金额"), 1U);
  EXPECT_EQ(columns.find("商家实收"), 2U);
  EXPECT_FALSE(columns.find("备注")) << "a name twice is no column to read by";
  EXPECT_FALSE(columns.find("服务费"));
}

TEST(Gunzip, InflatesEveryMemberAndHandsOnChunks) {
  const std::string text(300'000, 'x');
  Collected out;
  const std::string two_members = testing::gzip_bytes(text) + testing::gzip_bytes("tail");
  EXPECT_EQ(gunzip(two_members, 1 << 20, out.sink()), InflateStatus::ok);
  EXPECT_EQ(out.bytes, text + "tail");
}

TEST(Gunzip, StopsAZipBombAtTheLimit) {
  const std::string bomb = testing::gzip_bytes(std::string(8 << 20, '\0'));
  ASSERT_LT(bomb.size(), 64U * 1024U);
  std::size_t seen = 0;
  const auto status = gunzip(bomb, 1 << 20, [&](std::string_view chunk) {
    seen += chunk.size();
    return true;
  });
  EXPECT_EQ(status, InflateStatus::too_large);
  EXPECT_LE(seen, 1U << 20);
}

TEST(Gunzip, TellsATruncatedStreamACorruptOneAndAChecksumMismatchApart) {
  const std::string gz = testing::gzip_bytes(std::string(10'000, 'a') + "bill");
  Collected out;
  EXPECT_EQ(gunzip(gz.substr(0, gz.size() / 2), 1 << 20, out.sink()), InflateStatus::truncated);
  EXPECT_EQ(gunzip(gz.substr(0, gz.size() - 4), 1 << 20, out.sink()), InflateStatus::truncated);
  EXPECT_EQ(gunzip("", 1 << 20, out.sink()), InflateStatus::truncated);
  EXPECT_EQ(gunzip("not a gzip at all", 1 << 20, out.sink()), InflateStatus::malformed);
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 8] = static_cast<char>(bad_crc[bad_crc.size() - 8] ^ 0x01);
  EXPECT_EQ(gunzip(bad_crc, 1 << 20, out.sink()), InflateStatus::checksum);
}

TEST(Gunzip, StopsWhenTheSinkSaysSo) {
  const std::string gz = testing::gzip_bytes(std::string(200'000, 'a'));
  EXPECT_EQ(gunzip(gz, 1 << 20, [](std::string_view) { return false; }), InflateStatus::stopped);
}

TEST(Zip, FindsTheEntryByItsGbkNameAndReadsStoredAndDeflatedData) {
  const auto name = utf8_to_gbk("2088_20261201_业务明细.csv");
  ASSERT_TRUE(name);
  const std::string content = "#支付宝业务明细查询\n" + std::string(5000, 'r');
  const std::string archive = testing::zip_archive(
      {{"stored.txt", "plain", false, false, false, {}}, {*name, content, true, false, false, {}}});
  const auto entries = zip_entries(archive);
  ASSERT_TRUE(entries.ok()) << entries.detail();
  ASSERT_EQ(entries.value().size(), 2U);
  EXPECT_EQ(gbk_to_utf8(entries.value()[1].name), "2088_20261201_业务明细.csv");
  EXPECT_FALSE(entries.value()[1].utf8_name);
  Collected stored;
  Collected deflated;
  EXPECT_EQ(zip_extract(archive, entries.value()[0], 1 << 20, stored.sink()), InflateStatus::ok);
  EXPECT_EQ(zip_extract(archive, entries.value()[1], 1 << 20, deflated.sink()), InflateStatus::ok);
  EXPECT_EQ(stored.bytes, "plain");
  EXPECT_EQ(deflated.bytes, content);
}

TEST(Zip, RefusesACrcMismatchAndASizeTheDirectoryLiesAbout) {
  const std::string content(4000, 'c');
  for (const bool deflate : {true, false}) {
    const std::string bad_crc =
        testing::zip_archive({{"a.csv", content, deflate, false, true, {}}});
    const auto entries = zip_entries(bad_crc);
    ASSERT_TRUE(entries.ok()) << entries.detail();
    Collected out;
    EXPECT_EQ(zip_extract(bad_crc, entries.value().front(), 1 << 20, out.sink()),
              InflateStatus::checksum);
  }
  const std::string lying = testing::zip_archive({{"a.csv", content, true, false, false, 10}});
  const auto entries = zip_entries(lying);
  ASSERT_TRUE(entries.ok()) << entries.detail();
  Collected out;
  EXPECT_EQ(zip_extract(lying, entries.value().front(), 1 << 20, out.sink()),
            InflateStatus::checksum);
}

TEST(Zip, StopsABombAtTheLimitWhateverTheDirectorySays) {
  const std::string archive =
      testing::zip_archive({{"bomb.csv", std::string(8 << 20, '0'), true, false, false, 100}});
  const auto entries = zip_entries(archive);
  ASSERT_TRUE(entries.ok()) << entries.detail();
  Collected out;
  EXPECT_EQ(zip_extract(archive, entries.value().front(), 1 << 20, out.sink()),
            InflateStatus::too_large);
  EXPECT_LE(out.bytes.size(), 1U << 20);
}

TEST(Zip, RefusesWhatIsNotAWholeZip) {
  const std::string archive = testing::zip_archive({{"a.csv", "rows", true, false, false, {}}});
  EXPECT_EQ(zip_entries("").error(), errc::bad_archive);
  EXPECT_EQ(zip_entries("PK\x03\x04 not really").error(), errc::bad_archive);
  EXPECT_EQ(zip_entries(archive.substr(0, archive.size() - 1)).error(), errc::bad_archive);
  EXPECT_EQ(zip_entries(archive.substr(archive.size() / 2)).error(), errc::bad_archive);
  // The directory points at data beyond a cut archive.
  const auto entries = zip_entries(archive);
  ASSERT_TRUE(entries.ok()) << entries.detail();
  auto far = entries.value().front();
  far.local_offset = 1'000'000;
  Collected out;
  EXPECT_EQ(zip_extract(archive, far, 1 << 20, out.sink()), InflateStatus::malformed);
}

TEST(Gbk, ConvertsBothWaysAndRefusesBrokenSequences) {
  const auto gbk = utf8_to_gbk("#交易合计：3笔");
  ASSERT_TRUE(gbk);
  EXPECT_EQ(gbk->size(), 14U) << "one byte per ASCII character, two per Chinese one";
  EXPECT_EQ(gbk_to_utf8(*gbk), "#交易合计：3笔");
  EXPECT_FALSE(gbk_to_utf8(gbk->substr(0, 2)));  // a lead byte without its trail
}

TEST(StreamDigest, HashesInChunksAsInOne) {
  StreamDigest sha1(StreamDigest::Algorithm::sha1);
  sha1.update("a");
  sha1.update("bc");
  EXPECT_EQ(sha1.hex(), "a9993e364706816aba3e25717850c26c9cd0d89d");
  StreamDigest sha256(StreamDigest::Algorithm::sha256);
  sha256.update("abc");
  EXPECT_EQ(sha256.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::codec

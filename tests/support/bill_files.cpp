// Real-format WeChat Pay and Alipay bills built at test time (see the header).
#include "support/bill_files.hpp"

#include <zlib.h>

#include <stdexcept>

#include "codec/inflate.hpp"
#include "codec/text.hpp"

namespace seatflow::testing {
namespace {

const std::string kWechatHeader =
    "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,"
    "付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,"
    "退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注";
const std::string kWechatSummaryHeader =
    "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额";
const std::string kAlipayHeader =
    "支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,"
    "对方账户,订单金额（元）,商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,"
    "商家优惠（元）,券核销金额（元）,券名称,商家红包消费金额（元）,卡消费金额（元）,"
    "退款批次号/请求号,服务费（元）,分润（元）,备注";

std::string backticked(const std::vector<std::string>& fields) {
  std::string line;
  for (const auto& field : fields) {
    line += (line.empty() ? "`" : ",`") + field;
  }
  return line;
}

std::string wechat_row(const FakeBillRow& row) {
  const std::string amount = decimal_text(row.amount_cents);
  const std::string fee = decimal_text(row.fee, 5);
  if (!row.refund) {
    return backticked({row.time,
                       "wx2421b1c4370ec43b",
                       "1900000001",
                       "0",
                       "",
                       row.trade_no,
                       row.payment_no,
                       "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o",
                       "JSAPI",
                       "SUCCESS",
                       "OTHERS",
                       "CNY",
                       amount,
                       "0.00",
                       "0",
                       "0",
                       "0.00",
                       "0.00",
                       "",
                       "",
                       "演出票,A区",
                       "",
                       fee,
                       "0.60%",
                       amount,
                       "0.00",
                       ""});
  }
  return backticked({row.time,
                     "wx2421b1c4370ec43b",
                     "1900000001",
                     "0",
                     "",
                     row.trade_no,
                     row.payment_no,
                     "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o",
                     "JSAPI",
                     "REFUND",
                     "OTHERS",
                     "CNY",
                     "0.00",
                     "0.00",
                     "50000000382019052709732678859",
                     row.refund_no,
                     amount,
                     "0.00",
                     "ORIGINAL",
                     "SUCCESS",
                     "演出票,A区",
                     "",
                     fee,
                     "0.60%",
                     "0.00",
                     amount,
                     ""});
}

std::string alipay_row(const FakeBillRow& row) {
  const std::string amount = decimal_text(row.refund ? -row.amount_cents : row.amount_cents);
  return row.trade_no + "\t," + row.payment_no + "\t," + (row.refund ? "退款" : "交易") +
         "\t,座位票," + row.time + "," + row.time + ",\t,\t,\t,\t,*三(138****0000)\t," + amount +
         "," + amount + ",0.00,0.00,0.00,0.00,0.00,,0.00\t,0.00," +
         (row.refund ? row.refund_no : std::string()) + "\t," + decimal_text(row.fee) + ",0.00,";
}

void put16(std::string& out, std::uint32_t value) {
  out.push_back(static_cast<char>(value & 0xFFU));
  out.push_back(static_cast<char>((value >> 8U) & 0xFFU));
}

void put32(std::string& out, std::uint32_t value) {
  put16(out, value & 0xFFFFU);
  put16(out, value >> 16U);
}

std::string deflate_with(std::string_view data, int window_bits) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("deflateInit2");
  }
  std::string out(deflateBound(&stream, data.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(out.size() - stream.avail_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) {
    throw std::runtime_error("deflate");
  }
  return out;
}

std::string gbk(std::string_view utf8) {
  auto converted = codec::utf8_to_gbk(utf8);
  if (!converted) {
    throw std::invalid_argument("not GBK text");
  }
  return *converted;
}

}  // namespace

std::string decimal_text(std::int64_t units, int decimals) {
  std::int64_t scale = 1;
  for (int i = 0; i < decimals; ++i) {
    scale *= 10;
  }
  const std::int64_t magnitude = units < 0 ? -units : units;
  std::string fraction = std::to_string(scale + magnitude % scale).substr(1);
  return (units < 0 ? "-" : "") + std::to_string(magnitude / scale) +
         (decimals > 0 ? "." + fraction : "");
}

std::string wechat_bill_text(const std::vector<FakeBillRow>& rows, const FakeBillFlaws& flaws) {
  std::string text = kWechatHeader + "\r\n";
  std::int64_t order = 0, refunded = 0, fees = 0;
  for (const auto& row : rows) {
    text += wechat_row(row) + "\r\n";
    (row.refund ? refunded : order) += row.amount_cents;
    fees += row.fee;
  }
  if (flaws.raw_row) {
    text += *flaws.raw_row + "\r\n";
  }
  if (!flaws.no_summary) {
    const auto count =
        flaws.count.value_or(static_cast<std::int64_t>(rows.size() + (flaws.raw_row ? 1 : 0)));
    text += kWechatSummaryHeader + "\r\n";
    text += backticked({std::to_string(count), decimal_text(order), decimal_text(refunded), "0.00",
                        decimal_text(fees, 5), decimal_text(order), decimal_text(refunded)}) +
            "\r\n";
  }
  return text;
}

std::string alipay_bill_text(const std::vector<FakeBillRow>& rows, const FakeBillFlaws& flaws) {
  std::string text =
      "#支付宝业务明细查询\n#账号：[20880000000000000156]\n"
      "#起始日期：[2026年12月01日 00:00:00]   终止日期：[2026年12月02日 00:00:00]\n"
      "#-----------------------------------------业务明细列表--------------------------------------"
      "--\n" +
      kAlipayHeader + "\n";
  std::int64_t trades = 0, refunds = 0, received = 0, refunded = 0;
  for (const auto& row : rows) {
    text += alipay_row(row) + "\n";
    ++(row.refund ? refunds : trades);
    (row.refund ? refunded : received) += row.amount_cents;
  }
  if (flaws.raw_row) {
    text += *flaws.raw_row + "\n";
  }
  text +=
      "#-----------------------------------------业务明细列表结束----------------------------------"
      "--"
      "\n";
  if (!flaws.no_summary) {
    text += "#交易合计：" + std::to_string(flaws.count.value_or(trades)) + "笔，商家实收共" +
            decimal_text(received) + "元，商家优惠共0.00元\n";
  }
  text += "#退款合计：" + std::to_string(refunds) + "笔，商家实收退款共" + decimal_text(-refunded) +
          "元，商家优惠退款共0.00元\n#导出时间：[2026年12月02日 05:46:49]\n";
  return text;
}

std::string gzip_bytes(std::string_view data) {
  return deflate_with(data, 15 + 16);
}

std::string raw_deflate(std::string_view data) {
  return deflate_with(data, -15);
}

std::string zip_archive(const std::vector<FakeZipEntry>& entries) {
  std::string archive;
  std::string directory;
  for (const auto& entry : entries) {
    const std::string data = entry.deflate ? raw_deflate(entry.content) : entry.content;
    const std::uint32_t crc = codec::crc32_of(entry.content) + (entry.wrong_crc ? 1 : 0);
    const auto size =
        entry.declared_size.value_or(static_cast<std::uint32_t>(entry.content.size()));
    const std::uint32_t flags = entry.utf8_name ? 0x0800 : 0;
    const std::uint32_t offset = static_cast<std::uint32_t>(archive.size());
    std::string common;  // flags .. name length, shared by both headers
    put16(common, flags);
    put16(common, entry.deflate ? 8 : 0);
    put32(common, 0x5B2A0000);  // 2025-09-10 00:00 in DOS time and date
    put32(common, crc);
    put32(common, static_cast<std::uint32_t>(data.size()));
    put32(common, size);
    put16(common, static_cast<std::uint32_t>(entry.name.size()));
    put16(common, 0);  // extra field length
    put32(archive, 0x04034b50);
    put16(archive, 20);
    archive += common + entry.name + data;
    put32(directory, 0x02014b50);
    put16(directory, 20);
    put16(directory, 20);
    directory += common;
    put16(directory, 0);  // comment length
    put16(directory, 0);  // disk
    put16(directory, 0);  // internal attributes
    put32(directory, 0);  // external attributes
    put32(directory, offset);
    directory += entry.name;
  }
  const auto directory_at = static_cast<std::uint32_t>(archive.size());
  archive += directory;
  put32(archive, 0x06054b50);
  put16(archive, 0);
  put16(archive, 0);
  put16(archive, static_cast<std::uint32_t>(entries.size()));
  put16(archive, static_cast<std::uint32_t>(entries.size()));
  put32(archive, static_cast<std::uint32_t>(directory.size()));
  put32(archive, directory_at);
  put16(archive, 0);
  return archive;
}

std::string alipay_bill_zip(const std::string& date_compact, const std::string& detail_utf8,
                            bool wrong_crc) {
  const std::string base = "20880000000000000156_" + date_compact;
  FakeZipEntry detail{gbk(base + "_业务明细.csv"), gbk(detail_utf8), true, false, wrong_crc, {}};
  FakeZipEntry summary{gbk(base + "_业务明细(汇总).csv"),
                       gbk("#支付宝业务汇总查询\n门店编号,门店名称,交易订单总笔数\n,,0\n"),
                       true,
                       false,
                       false,
                       {}};
  return zip_archive({summary, detail});
}

channels::Result<void> RecordingBillSink::row(const channels::BillRow& row) {
  if (fail_at && rows.size() == *fail_at) {
    return channels::Failure{std::make_error_code(std::errc::io_error), "store refused", {}};
  }
  rows.push_back(row);
  return {};
}

}  // namespace seatflow::testing

// fuzz_bill's mode (6): the WeChat Pay and Alipay dialects' download answer, reached through a
// first answer the harness signs with the throwaway key (fuzz_bill_checks.hpp).
#include <string>

#include <nlohmann/json.hpp>

#include "channels/alipay/alipay_bill.hpp"
#include "channels/wechat/wechat_bill.hpp"
#include "codec/inflate.hpp"
#include "codec/text.hpp"
#include "fuzz_bill_checks.hpp"
#include "fuzz_support.hpp"
#include "support/bill_files.hpp"

namespace seatflow::fuzz {
namespace {

const std::string kWechatPlatformSerial = "SERIAL-1";

const channels::WechatBill& wechat_bill() {
  static const channels::WechatBill instance({"1900000001",
                                              url_of("https://api.mch.weixin.test"),
                                              throwaway_key(),
                                              "MERCHANT-1",
                                              {{kWechatPlatformSerial, throwaway_key()}}});
  return instance;
}

const channels::AlipayBill& alipay_bill() {
  static const channels::AlipayBill instance({"2021000000000001",
                                              url_of("https://openapi.alipay.test/gateway.do"),
                                              throwaway_key(), throwaway_key()});
  return instance;
}

// `body` signed as WeChat Pay signs its API answers, with the key the dialect trusts.
net::Response wechat_signed(std::string body) {
  const std::string timestamp = std::to_string(kNowMs / 1000);
  const std::string nonce = "fuzzbillnonce0123456789";
  const std::string message = timestamp + "\n" + nonce + "\n" + body + "\n";
  net::Response response;
  response.status = 200;
  response.headers = {{"wechatpay-timestamp", timestamp},
                      {"wechatpay-nonce", nonce},
                      {"wechatpay-signature", codec::base64_encode(codec::rsa_sha256_sign(
                                                  throwaway_key().get(), message))},
                      {"wechatpay-serial", kWechatPlatformSerial}};
  response.body = std::move(body);
  return response;
}

// The downloadurl answer, signed as Alipay signs it with the key the dialect trusts.
const net::Response& alipay_url_answer() {
  static const net::Response response = [] {
    const std::string member =
        R"({"code":"10000","msg":"Success","bill_download_url":)"
        R"("https://dwbillcenter.alipay.test/downloadBillFile.resource?bizType=trade"})";
    net::Response answer;
    answer.status = 200;
    answer.body =
        "{\"" + std::string(channels::kAlipayBillResponseMember) + "\":" + member + ",\"sign\":\"" +
        codec::base64_encode(codec::rsa_sha256_sign(throwaway_key().get(), member)) + "\"}";
    return answer;
  }();
  return response;
}

// The second step over `download`: checked, and when whole, its hash is that of `bill` (the
// uncompressed bill, when the harness knows it).
void download_step(const channels::BillDialect& dialect, const BillInput& input,
                   const net::Response& first, std::string download, const std::string* bill,
                   bool hash_wrong) {
  CheckingSink sink(BillIds::gateway_and_ours, input);
  channels::BillCursor cursor;
  const auto asked = dialect.step(kBillDay, input.limits, cursor, first, sink, kNowMs);
  require(asked.ok() && asked.value().kind == channels::BillStep::Kind::next,
          "a first answer signed with the dialect's key was refused");
  net::Response response;
  response.status = 200;
  response.body = std::move(download);
  const auto got = dialect.step(kBillDay, input.limits, cursor, response, sink, kNowMs);
  check_bill_result(got);
  if (sink.offered() != sink.taken()) {
    require(!got.ok() && got.detail() == kSinkRefusal, "a sink refusal was not the end");
  }
  if (!got.ok()) {
    return;
  }
  require(got.value().kind == channels::BillStep::Kind::done, "a download that is not the end");
  check_bill_summary(got.value().summary, sink);
  require(!hash_wrong, "a bill passed under a hash_value it does not have");
  require(bill == nullptr || got.value().summary.sha256 == sha256_hex(*bill),
          "the summary's SHA-256 is not the bill's");
}

// What `gz` inflates to within `bytes_max` (a prefix when it does not inflate whole).
std::string gunzipped(std::string_view gz, std::size_t bytes_max) {
  std::string out;
  (void)codec::gunzip(gz, bytes_max, [&](std::string_view chunk) {
    out.append(chunk);
    return true;
  });
  return out;
}

}  // namespace

// Flag a: the payload is the gzip as downloaded, else the harness gzips it. Flag b: the tradebill
// answer names another SHA-1, so nothing may pass.
void fuzz_wechat_download(const BillInput& input) {
  const std::string body =
      input.flag_a ? std::string(input.payload) : testing::gzip_bytes(input.payload);
  const std::string bill =
      input.flag_a ? gunzipped(body, input.limits.bytes_max) : std::string(input.payload);
  const std::string hash = sha1_hex(input.flag_b ? bill + "x" : bill);
  const nlohmann::json answer = {
      {"hash_type", "SHA1"},
      {"hash_value", hash},
      {"download_url", "https://api.mch.weixin.test/v3/billdownload/file?token=fuzz"}};
  download_step(wechat_bill(), input, wechat_signed(answer.dump()), body, &bill, input.flag_b);
}

// Flag a: the payload is the zip as downloaded. Else the harness zips it as Alipay does, with a
// GBK-named summary entry beside the detail entry: stored as it is, or (flag b) converted to GBK
// when it is UTF-8 and deflated.
void fuzz_alipay_download(const BillInput& input) {
  if (input.flag_a) {
    download_step(alipay_bill(), input, alipay_url_answer(), std::string(input.payload), nullptr,
                  false);
    return;
  }
  static const std::string base = "20880000000000000156_20231114";
  static const std::string detail_name = *codec::utf8_to_gbk(base + "_业务明细.csv");
  static const std::string summary_name = *codec::utf8_to_gbk(base + "_业务明细(汇总).csv");
  std::string content(input.payload);
  if (input.flag_b) {
    content = codec::utf8_to_gbk(input.payload).value_or(content);
  }
  const std::string zip =
      testing::zip_archive({{summary_name, "#summary\n", true, false, false, {}},
                            {detail_name, content, input.flag_b, false, false, {}}});
  download_step(alipay_bill(), input, alipay_url_answer(), zip, &content, false);
}

}  // namespace seatflow::fuzz

// wechat bill: the signed tradebill request, its verified answer, the signed download and the
// gzip's rows (see the header).
#include "channels/wechat/wechat_bill.hpp"

#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "channels/bill_lines.hpp"
#include "channels/wechat/wechat_bill_reader.hpp"
#include "codec/inflate.hpp"
#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

constexpr std::string_view kWechatBillHashType = "SHA1";
constexpr std::size_t kSha1HexChars = 40;

bool is_sha1_hex(std::string_view text) {
  if (text.size() != kSha1HexChars) {
    return false;
  }
  for (const char c : text) {
    if (codec::hex_digit_value(c) < 0) {
      return false;
    }
  }
  return true;
}

std::string lower_ascii(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return text;
}

// A verified error answer: no bill, not ready, or a failure naming its code.
Result<BillStep> wechat_bill_error(int status, const json& doc) {
  const std::string* code = codec::json_string(doc, "code", kWechatMaxFieldBytes);
  if (code != nullptr && *code == kWechatNoStatement) {
    BillStep step;
    step.kind = BillStep::Kind::no_bill;
    step.detail = std::string(kWechatNoStatement);
    return step;
  }
  if (code != nullptr && *code == kWechatStatementCreating) {
    BillStep step;
    step.kind = BillStep::Kind::not_ready;
    step.detail = "WeChat Pay is making the bill (STATEMENT_CREATING)";
    return step;
  }
  return rejected_answer("WeChat Pay answered " + std::to_string(status) + " code " +
                         (code == nullptr ? std::string("?") : codec::log_safe_code(*code)));
}

}  // namespace

Result<BillSummary> wechat_bill_rows(std::string_view gzip_body, std::string_view sha1_hex,
                                     const BillLimits& limits, BillRowSink& sink) {
  WechatBillReader reader(limits, sink);
  auto read = read_bill_lines(
      "the bill's gzip",
      [&](const codec::ChunkSink& out) { return codec::gunzip(gzip_body, limits.bytes_max, out); },
      true, [&](std::string_view line) { return reader.line(line); });
  if (!read.ok()) {
    return std::move(read).failure();
  }
  if (read.value().sha1 != lower_ascii(std::string(sha1_hex))) {
    return rejected_answer("the bill's SHA-1 is not the hash_value of the tradebill answer");
  }
  if (auto whole = reader.finish(); !whole.ok()) {
    return std::move(whole).failure();
  }
  return BillSummary{reader.rows_given(), read.value().sha256};
}

WechatBill::WechatBill(WechatQueryConfig config) : config_(std::move(config)) {
  check_wechat_query_config(config_, "wechat bill");
}

std::string WechatBill::target_for(std::string_view date) const {
  std::string target = config_.gateway.target;
  target.append(kWechatTradeBillPath).append("?bill_date=").append(date);
  target.append("&bill_type=ALL&tar_type=GZIP");
  return target;
}

net::Request WechatBill::signed_get(net::Url url, std::int64_t now_ms) const {
  net::Request request;
  request.method = "GET";
  request.url = std::move(url);
  request.headers = {{"Authorization", wechat_authorization(config_, request.method,
                                                            request.url.target, "", now_ms)},
                     {"Accept", "application/json"}};
  return request;
}

net::Request WechatBill::bill_request(const BillDay& day, std::int64_t now_ms) const {
  if (!is_bill_date(day.date)) {
    throw std::invalid_argument("wechat bill: the date is not YYYY-MM-DD");
  }
  net::Url url = config_.gateway;
  url.target = target_for(day.date);
  return signed_get(std::move(url), now_ms);
}

Result<BillStep> WechatBill::tradebill_answer(const net::Response& response, BillCursor& cursor,
                                              std::int64_t now_ms) const {
  if (auto verified = verify_wechat_answer(config_, response, now_ms); !verified.ok()) {
    return std::move(verified).failure();
  }
  const json doc = json::parse(response.body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("the tradebill answer is not a JSON object");
  }
  if (response.status != 200) {
    return wechat_bill_error(response.status, doc);
  }
  const std::string* hash_type = codec::json_string(doc, "hash_type", kWechatMaxFieldBytes);
  const std::string* hash_value = codec::json_string(doc, "hash_value", kWechatMaxFieldBytes);
  const std::string* download = codec::json_string(doc, "download_url", kWechatDownloadUrlBytesMax);
  if (hash_type == nullptr || *hash_type != kWechatBillHashType || hash_value == nullptr ||
      !is_sha1_hex(*hash_value) || download == nullptr) {
    return rejected_answer("hash_type is not SHA1, or hash_value or download_url is missing");
  }
  auto url = net::parse_url(*download);
  if (!url.ok() || (config_.gateway.tls && !url.value().tls)) {
    return rejected_answer("download_url is not an https URL");
  }
  cursor.state = lower_ascii(*hash_value);
  BillStep step;
  step.kind = BillStep::Kind::next;
  step.next = signed_get(std::move(url).value(), now_ms);
  return step;
}

Result<BillStep> WechatBill::step(const BillDay& /*day*/, const BillLimits& limits,
                                  BillCursor& cursor, const net::Response& response,
                                  BillRowSink& sink, std::int64_t now_ms) const {
  const int answer = cursor.step++;
  if (answer == 0) {
    return tradebill_answer(response, cursor, now_ms);
  }
  if (answer != 1 || !is_sha1_hex(cursor.state)) {
    return rejected_answer("no further answer was asked for");
  }
  return download_step(response, cursor, [&](std::string_view body) {
    return wechat_bill_rows(body, cursor.state, limits, sink);
  });
}

}  // namespace seatflow::channels

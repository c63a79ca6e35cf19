// alipay bill: the signed downloadurl query, its verified answer, the zip and its GBK rows (see
// the header).
#include "channels/alipay/alipay_bill.hpp"

#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "channels/alipay/alipay_bill_reader.hpp"
#include "channels/bill_lines.hpp"
#include "codec/json_fields.hpp"
#include "codec/text.hpp"
#include "codec/zip_reader.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

constexpr std::string_view kAlipayBusinessFailed = "40004";

std::string alipay_code_text(const json& doc, const char* name) {
  const std::string* code = codec::json_string(doc, name, kAlipayMaxValueBytes);
  return code == nullptr ? std::string("?") : codec::log_safe_code(*code);
}

// The one entry whose name ends in kAlipayBillEntrySuffix.
Result<const codec::ZipEntry*> alipay_bill_entry(const std::vector<codec::ZipEntry>& entries) {
  const codec::ZipEntry* found = nullptr;
  for (const auto& entry : entries) {
    const auto name =
        entry.utf8_name ? std::optional<std::string>(entry.name) : codec::gbk_to_utf8(entry.name);
    if (name && name->ends_with(kAlipayBillEntrySuffix)) {
      if (found != nullptr) {
        return rejected_answer("the bill zip has two _业务明细.csv entries");
      }
      found = &entry;
    }
  }
  if (found == nullptr) {
    return rejected_answer("the bill zip has no _业务明细.csv entry");
  }
  return found;
}

// A no-bill answer: not made yet until noon of the next day, then a day without trades.
BillStep alipay_no_bill(const BillDay& day, std::int64_t now_ms) {
  BillStep step;
  if (now_ms < day.end_ms + kAlipayBillReadyAfterMs) {
    step.kind = BillStep::Kind::not_ready;
    step.detail = "Alipay has no bill yet (isp.bill_not_exist before noon of the next day)";
  } else {
    step.kind = BillStep::Kind::no_bill;
    step.detail = std::string(kAlipayBillNotExist);
  }
  return step;
}

}  // namespace

FormParams alipay_bill_params(std::string_view app_id, std::string_view date, std::int64_t now_ms) {
  const json biz_content = {{"bill_type", kAlipayBillType}, {"bill_date", std::string(date)}};
  return alipay_openapi_params(app_id, kAlipayBillMethod, biz_content.dump(), now_ms);
}

Result<BillSummary> alipay_bill_rows(std::string_view zip_body, const BillLimits& limits,
                                     BillRowSink& sink) {
  const auto entries = codec::zip_entries(zip_body);
  if (!entries.ok()) {
    return rejected_answer("the bill zip: " + entries.detail());
  }
  auto entry = alipay_bill_entry(entries.value());
  if (!entry.ok()) {
    return std::move(entry).failure();
  }
  const codec::ZipEntry& bill = *entry.value();
  if (bill.uncompressed_bytes > limits.bytes_max) {
    return rejected_answer("the bill's entry: over SEATFLOW_BILL_BYTES_MAX uncompressed");
  }
  AlipayBillReader reader(limits, sink);
  auto read = read_bill_lines(
      "the bill's zip entry",
      [&](const codec::ChunkSink& out) {
        return codec::zip_extract(zip_body, bill, limits.bytes_max, out);
      },
      false,
      [&](std::string_view line) -> Result<void> {
        const auto utf8 = codec::gbk_to_utf8(line);
        if (!utf8) {
          return rejected_answer("a line of the bill is not GBK text");
        }
        return reader.line(*utf8);
      });
  if (!read.ok()) {
    return std::move(read).failure();
  }
  if (auto whole = reader.finish(); !whole.ok()) {
    return std::move(whole).failure();
  }
  return BillSummary{reader.rows_given(), read.value().sha256};
}

AlipayBill::AlipayBill(AlipayQueryConfig config) : config_(std::move(config)) {
  check_alipay_query_config(config_, "alipay bill");
}

net::Request AlipayBill::bill_request(const BillDay& day, std::int64_t now_ms) const {
  if (!is_bill_date(day.date)) {
    throw std::invalid_argument("alipay bill: the date is not YYYY-MM-DD");
  }
  return alipay_signed_request(config_, alipay_bill_params(config_.app_id, day.date, now_ms));
}

Result<BillStep> AlipayBill::url_answer(const BillDay& day, const net::Response& response,
                                        std::int64_t now_ms) const {
  const auto raw =
      alipay_verified_member(response, kAlipayBillResponseMember, config_.alipay_public_key.get());
  if (!raw.ok()) {
    return raw.failure();
  }
  const json doc = json::parse(raw.value(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("the downloadurl answer is not a JSON object");
  }
  const std::string* code = codec::json_string(doc, "code", kAlipayMaxValueBytes);
  if (code == nullptr || *code != kAlipayCodeSuccess) {
    const std::string* sub_code = codec::json_string(doc, "sub_code", kAlipayMaxValueBytes);
    if (code != nullptr && *code == kAlipayBusinessFailed && sub_code != nullptr &&
        (*sub_code == kAlipayBillNotExist || *sub_code == kAlipayBillNotExistDocumented)) {
      return alipay_no_bill(day, now_ms);
    }
    return rejected_answer("Alipay answered code " + alipay_code_text(doc, "code") + " sub_code " +
                           alipay_code_text(doc, "sub_code"));
  }
  const std::string* link =
      codec::json_string(doc, "bill_download_url", kAlipayDownloadUrlBytesMax);
  if (link == nullptr) {
    return rejected_answer("bill_download_url missing or not an http(s) URL");
  }
  auto url = net::parse_url(*link);
  if (!url.ok()) {
    return rejected_answer("bill_download_url missing or not an http(s) URL");
  }
  BillStep step;
  step.kind = BillStep::Kind::next;
  step.next = net::Request{"GET", std::move(url).value(), {{"Accept", "*/*"}}, {}};
  return step;
}

Result<BillStep> AlipayBill::step(const BillDay& day, const BillLimits& limits, BillCursor& cursor,
                                  const net::Response& response, BillRowSink& sink,
                                  std::int64_t now_ms) const {
  const int answer = cursor.step++;
  if (answer == 0) {
    return url_answer(day, response, now_ms);
  }
  if (answer != 1) {
    return rejected_answer("no further answer was asked for");
  }
  return download_step(response, cursor,
                       [&](std::string_view body) { return alipay_bill_rows(body, limits, sink); });
}

}  // namespace seatflow::channels

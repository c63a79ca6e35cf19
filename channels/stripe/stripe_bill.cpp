// stripe bill: the balance-transaction pages requested, checked and read row by row, the hash
// carried from page to page in the cursor.
#include "channels/stripe/stripe_bill.hpp"

#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "codec/json_fields.hpp"
#include "codec/sha256_state.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

// An expandable reference as Stripe writes it: an id, or the expanded object's id; nullptr when
// absent, null or not an id.
const std::string* stripe_ref_id(const json& object, const char* name) {
  const json* value = codec::json_member(object, name);
  if (value != nullptr && value->is_object()) {
    value = codec::json_member(*value, "id");
  }
  if (value == nullptr || !value->is_string()) {
    return nullptr;
  }
  const auto& text = value->get_ref<const std::string&>();
  return codec::is_valid_id(text) ? &text : nullptr;
}

std::optional<std::int64_t> stripe_bill_int(const json& object, const char* name) {
  const json* value = codec::json_member(object, name);
  return value == nullptr ? std::nullopt : codec::json_int64(*value);
}

// An optional metadata id: absent is "", present must be an id.
Result<std::string> stripe_metadata_id(const json& source, const char* name) {
  const json* metadata = codec::json_object(source, "metadata");
  const json* value = metadata == nullptr ? nullptr : codec::json_member(*metadata, name);
  if (value == nullptr) {
    return std::string();
  }
  if (!value->is_string() || !codec::is_valid_id(value->get_ref<const std::string&>())) {
    return rejected_answer(std::string("source metadata.") + name + " is not an id");
  }
  return value->get<std::string>();
}

std::optional<BillRowKind> stripe_row_kind(const std::string& type) {
  if (type == "charge" || type == "payment") {
    return BillRowKind::payment;
  }
  if (type == "refund" || type == "payment_refund") {
    return BillRowKind::refund;
  }
  return std::nullopt;
}

// The row's amount: the source's (the payment's currency); when the balance moved in that same
// currency, the transaction's amount must say the same, with the sign of its kind.
Result<std::int64_t> stripe_row_amount(const json& txn, const json& source, BillRowKind kind) {
  const auto amount = stripe_bill_int(source, "amount");
  const std::string* currency = codec::json_string(source, "currency", kStripeFieldBytesMax);
  const std::string* txn_currency = codec::json_string(txn, "currency", kStripeFieldBytesMax);
  const auto txn_amount = stripe_bill_int(txn, "amount");
  if (!amount || *amount <= 0 || currency == nullptr || txn_currency == nullptr || !txn_amount) {
    return rejected_answer("an amount or currency is missing, or the source's amount is not > 0");
  }
  const auto signed_amount = kind == BillRowKind::payment ? *amount : -*amount;
  if (codec::iequals_ascii(*currency, *txn_currency) && *txn_amount != signed_amount) {
    return rejected_answer("a balance transaction's amount differs from its source's");
  }
  return *amount;
}

// The source's fields into `row`.
Result<void> read_stripe_source(const json& txn, const json& source, BillRow& row) {
  const bool payment = row.kind == BillRowKind::payment;
  const std::string* object = codec::json_string(source, "object", kStripeFieldBytesMax);
  const std::string* id = stripe_ref_id(txn, "source");
  if (object == nullptr || *object != (payment ? "charge" : "refund") || id == nullptr) {
    return rejected_answer(payment ? "a payment's source is not an expanded charge"
                                   : "a refund's source is not an expanded refund");
  }
  const std::string* intent = stripe_ref_id(source, "payment_intent");
  const std::string* trade =
      intent != nullptr ? intent : (payment ? id : stripe_ref_id(source, "charge"));
  if (trade == nullptr) {
    return rejected_answer("a refund names neither a PaymentIntent nor a charge");
  }
  auto amount = stripe_row_amount(txn, source, row.kind);
  auto payment_no = stripe_metadata_id(source, "paymentNo");
  auto refund_no = stripe_metadata_id(source, "refundNo");
  if (!amount.ok() || !payment_no.ok() || !refund_no.ok()) {
    return rejected_answer(!amount.ok()
                               ? amount.detail()
                               : (!payment_no.ok() ? payment_no.detail() : refund_no.detail()));
  }
  row.trade_no = *trade;
  row.amount_cents = amount.value();
  row.payment_no = std::move(payment_no).value();
  if (!payment) {
    // SeatFlow's refund number when the refund is one of its own, else Stripe's id.
    row.refund_no = refund_no.value().empty() ? *id : std::move(refund_no).value();
  }
  return {};
}

// One balance transaction: a row, nothing (a type SeatFlow does not reconcile), or a rejection.
Result<std::optional<BillRow>> stripe_row_of(const json& txn, const BillDay& day) {
  if (!txn.is_object()) {
    return rejected_answer("a balance transaction is not an object");
  }
  const std::string* type = codec::json_string(txn, "type", kStripeFieldBytesMax);
  const auto created_s = stripe_bill_int(txn, "created");
  const auto fee = stripe_bill_int(txn, "fee");
  if (type == nullptr || !created_s || !fee || stripe_ref_id(txn, "id") == nullptr) {
    return rejected_answer("a balance transaction without id, type, created or fee");
  }
  if (*created_s < day.start_ms / 1000 || *created_s >= day.end_ms / 1000) {
    return rejected_answer("a balance transaction created outside the bill's day");
  }
  const auto kind = stripe_row_kind(*type);
  if (!kind) {
    return std::optional<BillRow>{};
  }
  const json* source = codec::json_object(txn, "source");
  if (source == nullptr) {
    return rejected_answer("a balance transaction's source is not expanded");
  }
  BillRow row;
  row.kind = *kind;
  row.fee_cents = *fee;
  row.completed_at_ms = *created_s * 1000;
  if (auto read = read_stripe_source(txn, *source, row); !read.ok()) {
    return std::move(read).failure();
  }
  return std::optional<BillRow>{std::move(row)};
}

}  // namespace

Result<StripeBillPage> stripe_bill_page(std::string_view body, const BillDay& day,
                                        std::size_t rows_left, BillRowSink& sink) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("page is not a JSON object");
  }
  const std::string* object = codec::json_string(doc, "object", kStripeFieldBytesMax);
  const json* data = codec::json_member(doc, "data");
  const json* has_more = codec::json_member(doc, "has_more");
  if (object == nullptr || *object != "list" || data == nullptr || !data->is_array() ||
      has_more == nullptr || !has_more->is_boolean()) {
    return rejected_answer("page is not a list with data and has_more");
  }
  StripeBillPage page;
  page.has_more = has_more->get<bool>();
  if (page.has_more && data->empty()) {
    return rejected_answer("an empty page says it has more");
  }
  for (const auto& txn : *data) {
    auto row = stripe_row_of(txn, day);
    if (!row.ok()) {
      return std::move(row).failure();
    }
    if (!row.value()) {
      continue;
    }
    if (page.rows == rows_left) {
      return rejected_answer("the bill has more rows than SEATFLOW_BILL_ROWS_MAX");
    }
    if (auto taken = sink.row(*row.value()); !taken.ok()) {
      return std::move(taken).failure();
    }
    ++page.rows;
  }
  if (!data->empty()) {
    page.last_id = *stripe_ref_id(data->back(), "id");  // stripe_row_of checked every id
  }
  return page;
}

StripeBill::StripeBill(StripeApiConfig config) : config_(std::move(config)) {
  check_stripe_api_config(config_, "stripe bill");
}

net::Request StripeBill::page_request(const BillDay& day, std::string_view starting_after) const {
  std::string target = config_.api.target + std::string(kStripeBalanceTransactionsPath);
  target.append("?").append(codec::form_encode("created[gte]")).append("=");
  target.append(std::to_string(day.start_ms / 1000));
  target.append("&").append(codec::form_encode("created[lt]")).append("=");
  target.append(std::to_string(day.end_ms / 1000));
  target.append("&limit=").append(std::to_string(kStripeBillPageRows));
  target.append("&").append(codec::form_encode("expand[]")).append("=data.source");
  if (!starting_after.empty()) {
    target.append("&starting_after=").append(codec::form_encode(starting_after));
  }
  net::Request request;
  request.method = "GET";
  request.url = config_.api;
  request.url.target = std::move(target);
  request.headers = stripe_headers(config_);
  return request;
}

net::Request StripeBill::bill_request(const BillDay& day, std::int64_t /*now_ms*/) const {
  return page_request(day, "");
}

Result<BillStep> StripeBill::step(const BillDay& day, const BillLimits& limits, BillCursor& cursor,
                                  const net::Response& response, BillRowSink& sink,
                                  std::int64_t /*now_ms*/) const {
  if (response.status != 200) {
    return rejected_answer("Stripe answered " + std::to_string(response.status) + " code " +
                           stripe_error_code(response.body));
  }
  cursor.bytes += response.body.size();
  if (cursor.bytes > limits.bytes_max) {
    return rejected_answer("the bill is larger than SEATFLOW_BILL_BYTES_MAX");
  }
  const std::size_t rows_left = limits.rows_max > cursor.rows ? limits.rows_max - cursor.rows : 0;
  auto page = stripe_bill_page(response.body, day, rows_left, sink);
  if (!page.ok()) {
    return std::move(page).failure();
  }
  if (cursor.state.empty()) {
    cursor.state = codec::sha256_begin();
  }
  codec::sha256_update(cursor.state, response.body);
  cursor.rows += page.value().rows;
  ++cursor.step;
  BillStep step;
  if (page.value().has_more) {
    step.kind = BillStep::Kind::next;
    step.next = page_request(day, page.value().last_id);
    return step;
  }
  step.kind = BillStep::Kind::done;
  step.summary = BillSummary{cursor.rows, codec::sha256_finish(cursor.state)};
  return step;
}

}  // namespace seatflow::channels

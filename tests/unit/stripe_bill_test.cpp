// Unit tests for the `stripe` bill dialect (SPEC §13): the balance-transaction pages requested one
// after the other, each row read from its expanded source, the hash over the pages, every limit and
// every malformed page; and the resumable SHA-256 the hash is carried in.
#include "channels/stripe/stripe_bill.hpp"

#include <gtest/gtest.h>

#include <vector>

#include <nlohmann/json.hpp>

#include "codec/digest.hpp"
#include "codec/sha256_state.hpp"
#include "codec/text.hpp"
#include "support/rejections.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using testing::rejection_detail;

// 2026-12-05 in UTC.
const BillDay kDay{"2026-12-05", 1'796'428'800'000, 1'796'515'200'000};
constexpr std::int64_t kNoon = 1'796'428'800 + 12 * 3600;

struct Rows final : BillRowSink {
  std::vector<BillRow> rows;
  Result<void> row(const BillRow& row) override {
    rows.push_back(row);
    return {};
  }
};

StripeBill make_bill() {
  return StripeBill(StripeApiConfig{"sk_test_4eC39HqLyjWDarjtT1zdp7dc",
                                    net::parse_url("https://api.stripe.com").value(), "cny"});
}

json charge_txn(const std::string& id, const std::string& intent, const std::string& payment_no,
                std::int64_t amount, std::int64_t created = kNoon) {
  return {{"id", id},
          {"object", "balance_transaction"},
          {"amount", amount},
          {"available_on", created + 172800},
          {"created", created},
          {"currency", "cny"},
          {"description", nullptr},
          {"exchange_rate", nullptr},
          {"fee", 175},
          {"fee_details",
           json::array({{{"amount", 175}, {"currency", "cny"}, {"type", "stripe_fee"}}})},
          {"net", amount - 175},
          {"reporting_category", "charge"},
          {"status", "pending"},
          {"type", "charge"},
          {"source",
           {{"id", "ch_" + intent},
            {"object", "charge"},
            {"amount", amount},
            {"amount_captured", amount},
            {"balance_transaction", id},
            {"currency", "cny"},
            {"metadata", {{"paymentNo", payment_no}}},
            {"paid", true},
            {"payment_intent", intent},
            {"status", "succeeded"}}}};
}

json refund_txn(const std::string& id, const std::string& intent, json metadata,
                std::int64_t amount) {
  return {{"id", id},
          {"object", "balance_transaction"},
          {"amount", -amount},
          {"created", kNoon + 60},
          {"currency", "cny"},
          {"fee", 0},
          {"net", -amount},
          {"reporting_category", "refund"},
          {"status", "available"},
          {"type", "refund"},
          {"source",
           {{"id", "re_" + intent},
            {"object", "refund"},
            {"amount", amount},
            {"charge", "ch_" + intent},
            {"currency", "cny"},
            {"metadata", std::move(metadata)},
            {"payment_intent", intent},
            {"status", "succeeded"}}}};
}

json payout_txn(const std::string& id) {
  return {{"id", id},         {"object", "balance_transaction"},
          {"amount", -90000}, {"created", kNoon},
          {"fee", 0},         {"currency", "cny"},
          {"type", "payout"}, {"source", {{"id", "po_1"}, {"object", "payout"}}}};
}

std::string page(const json& data, bool has_more) {
  return json{{"object", "list"},
              {"url", "/v1/balance_transactions"},
              {"has_more", has_more},
              {"data", data}}
      .dump();
}

net::Response ok(std::string body) {
  return net::Response{200, {{"content-type", "application/json"}}, std::move(body)};
}

TEST(StripeBill, AsksForTheUtcDayPageByPageWithExpandedSources) {
  const auto bill = make_bill();
  const auto first = bill.bill_request(kDay, 0);
  EXPECT_EQ(first.method, "GET");
  EXPECT_EQ(first.url.target,
            "/v1/balance_transactions?created%5Bgte%5D=1796428800&created%5Blt%5D=1796515200"
            "&limit=100&expand%5B%5D=data.source");
  EXPECT_EQ(first.headers.front(),
            (std::pair<std::string, std::string>{"Authorization",
                                                 "Bearer sk_test_4eC39HqLyjWDarjtT1zdp7dc"}));
  EXPECT_EQ(bill.page_request(kDay, "txn_1").url.target,
            first.url.target + "&starting_after=txn_1");
}

TEST(StripeBill, ReadsEveryPageIntoRowsAndHashesThePagesInOrder) {
  const auto bill = make_bill();
  const auto page1 =
      page(json::array({charge_txn("txn_3", "pi_A", "P-A", 5000), payout_txn("txn_2")}), true);
  const auto page2 = page(json::array({refund_txn("txn_1", "pi_A", {{"refundNo", "rfd_9"}}, 5000),
                                       refund_txn("txn_0", "pi_B", json::object(), 1200)}),
                          false);
  Rows sink;
  BillCursor cursor;
  const auto one = bill.step(kDay, {}, cursor, ok(page1), sink, 0);
  ASSERT_TRUE(one.ok()) << one.detail();
  ASSERT_EQ(one.value().kind, BillStep::Kind::next);
  EXPECT_EQ(one.value().next->url.target, bill.page_request(kDay, "txn_2").url.target);
  const auto two = bill.step(kDay, {}, cursor, ok(page2), sink, 0);
  ASSERT_TRUE(two.ok()) << two.detail();
  ASSERT_EQ(two.value().kind, BillStep::Kind::done);
  EXPECT_EQ(two.value().summary.rows, 3U);
  EXPECT_EQ(two.value().summary.sha256, codec::sha256_hex(page1 + page2));
  EXPECT_EQ(cursor.bytes, page1.size() + page2.size());
  ASSERT_EQ(sink.rows.size(), 3U);
  const auto& paid = sink.rows[0];
  EXPECT_EQ(paid.kind, BillRowKind::payment);
  EXPECT_EQ(paid.trade_no, "pi_A");
  EXPECT_EQ(paid.payment_no, "P-A");
  EXPECT_EQ(paid.amount_cents, 5000);
  EXPECT_EQ(paid.fee_cents, 175);
  EXPECT_EQ(paid.completed_at_ms, kNoon * 1000);
  EXPECT_EQ(sink.rows[1].kind, BillRowKind::refund);
  EXPECT_EQ(sink.rows[1].amount_cents, 5000);
  EXPECT_EQ(sink.rows[1].refund_no, "rfd_9");    // SeatFlow's own refund number
  EXPECT_EQ(sink.rows[1].payment_no, "");        // found through the trade
  EXPECT_EQ(sink.rows[2].refund_no, "re_pi_B");  // a refund made at Stripe: its own id
  EXPECT_EQ(sink.rows[2].trade_no, "pi_B");
}

TEST(StripeBill, AnEmptyDayIsAWholeEmptyBill) {
  Rows sink;
  BillCursor cursor;
  const auto body = page(json::array(), false);
  const auto done = make_bill().step(kDay, {}, cursor, ok(body), sink, 0);
  ASSERT_TRUE(done.ok()) << done.detail();
  EXPECT_EQ(done.value().kind, BillStep::Kind::done);
  EXPECT_EQ(done.value().summary.rows, 0U);
  EXPECT_EQ(done.value().summary.sha256, codec::sha256_hex(body));
}

TEST(StripeBill, AMalformedPageIsARejection) {
  auto unexpanded = charge_txn("txn_1", "pi_A", "P-A", 5000);
  unexpanded["source"] = "ch_pi_A";
  auto mismatch = charge_txn("txn_1", "pi_A", "P-A", 5000);
  mismatch["amount"] = 4000;
  auto not_an_id = charge_txn("txn_1", "pi_A", "P-A", 5000);
  not_an_id["source"]["metadata"]["paymentNo"] = 7;
  const std::vector<std::pair<std::string, std::string>> cases{
      {page(json::array({unexpanded}), false), "not expanded"},
      {page(json::array({charge_txn("txn_1", "pi_A", "P-A", 5000, kNoon + 86400)}), false),
       "outside the bill's day"},
      {page(json::array({mismatch}), false), "differs from its source's"},
      {page(json::array({not_an_id}), false), "metadata.paymentNo"},
      {page(json::array({charge_txn("txn_1", "pi_A", "P-A", 0)}), false), "> 0"},
      {page(json::array(), true), "says it has more"},
      {R"({"object":"list","data":[]})", "has_more"},
      {R"({"object":"list","data":[)", "not a JSON object"}};
  for (const auto& [body, needle] : cases) {
    Rows sink;
    BillCursor cursor;
    const auto result = make_bill().step(kDay, {}, cursor, ok(body), sink, 0);
    EXPECT_EQ(testing::reason_of(result), errc::rejected_answer) << body;
    EXPECT_NE(rejection_detail(result).find(needle), std::string::npos)
        << needle << " → " << rejection_detail(result);
  }
  Rows sink;
  BillCursor cursor;
  const auto unauthorized = make_bill().step(
      kDay, {}, cursor,
      net::Response{
          401, {}, R"({"error":{"type":"invalid_request_error","message":"Invalid API Key"}})"},
      sink, 0);
  EXPECT_EQ(rejection_detail(unauthorized), "Stripe answered 401 code invalid_request_error");
}

TEST(StripeBill, TheRowAndByteLimitsHoldAcrossPages) {
  const auto body = page(json::array({charge_txn("txn_2", "pi_A", "P-A", 5000),
                                      charge_txn("txn_1", "pi_B", "P-B", 5000)}),
                         true);
  Rows sink;
  BillCursor cursor;
  BillLimits limits;
  limits.rows_max = 3;
  ASSERT_TRUE(make_bill().step(kDay, limits, cursor, ok(body), sink, 0).ok());
  const auto over = make_bill().step(kDay, limits, cursor, ok(body), sink, 0);
  EXPECT_NE(rejection_detail(over).find("SEATFLOW_BILL_ROWS_MAX"), std::string::npos);
  Rows bytes_sink;
  BillCursor bytes_cursor;
  limits.bytes_max = body.size() - 1;
  const auto too_large = make_bill().step(kDay, limits, bytes_cursor, ok(body), bytes_sink, 0);
  EXPECT_NE(rejection_detail(too_large).find("SEATFLOW_BILL_BYTES_MAX"), std::string::npos);
  EXPECT_TRUE(bytes_sink.rows.empty());
}

TEST(Sha256State, ResumedAcrossCallsEqualsTheHashOfTheWhole) {
  std::string state = codec::sha256_begin();
  EXPECT_EQ(codec::sha256_finish(state), codec::sha256_hex(""));
  const std::string text(1000, 'x');
  for (std::size_t at = 0; at < text.size(); at += 37) {
    codec::sha256_update(state, std::string_view(text).substr(at, 37));
  }
  EXPECT_EQ(codec::sha256_finish(state), codec::sha256_hex(text));
  std::string bad = "not a state";
  EXPECT_THROW(codec::sha256_update(bad, "x"), std::invalid_argument);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

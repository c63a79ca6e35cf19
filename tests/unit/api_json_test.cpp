// The callback log's rows as the API answers them: keys, nulls and the raw request's forms.
#include <gtest/gtest.h>

#include "http/api_json.hpp"

namespace seatflow::http {
namespace {
namespace SEATFLOW_UNITY_ID {

persistence::CallbackRow row() {
  persistence::CallbackRow out;
  out.callback_id = "cb1";
  out.payment_no = "p1";
  out.channel = "hmac";
  out.status = 1;
  out.result = "applied";
  out.http_status = 200;
  out.duplicate_count = 2;
  out.received_at = "2026-12-01T18:00:00.5+00:00";
  out.received_us = 1;
  return out;
}

TEST(ApiJsonTest, ACallbackRowHasTheSummaryKeysSortedWithNullsForWhatItLacks) {
  EXPECT_EQ(to_json(row()).dump(),
            R"({"callbackId":"cb1","channel":"hmac","duplicateCount":2,"httpStatus":200,)"
            R"("lastDuplicateAt":null,"orderNo":null,"paymentNo":"p1",)"
            R"("receivedAt":"2026-12-01T18:00:00.5+00:00","result":"applied","status":1})");
}

TEST(ApiJsonTest, APageNamesItsNextCursorOrNull) {
  persistence::CallbackPage page{{row()}, std::nullopt};
  EXPECT_TRUE(to_json(page)["nextCursor"].is_null());
  page.next_cursor = "1_cb1";
  EXPECT_EQ(to_json(page)["nextCursor"], "1_cb1");
  EXPECT_EQ(to_json(page)["callbacks"].size(), 1u);
}

TEST(ApiJsonTest, ARawBodyIsTextWhenUtf8AndBase64Otherwise) {
  persistence::CallbackDetail detail{row(), std::nullopt, ""};
  auto body = to_json(detail);
  EXPECT_TRUE(body["rawBody"].is_null());
  EXPECT_EQ(body["rawHeaders"], nlohmann::json::object());
  detail.raw_body = "{\"a\":1}";
  detail.raw_headers = R"({"x-sign":"s"})";
  body = to_json(detail);
  EXPECT_EQ(body["rawBody"], "{\"a\":1}");
  EXPECT_EQ(body["rawHeaders"]["x-sign"], "s");
  detail.raw_body = std::string("\xff\x00", 2);
  body = to_json(detail);
  EXPECT_FALSE(body.contains("rawBody"));
  EXPECT_EQ(body["rawBodyBase64"], "/wA=");
}

TEST(ApiJsonTest, TimelineEntriesNameTheirKindAndKeepTheirDetail) {
  const persistence::TimelineEntry query{5, "t",
                                         persistence::QueryEntry{2, "pending", std::nullopt}};
  EXPECT_EQ(
      to_json(query).dump(),
      R"({"at":"t","detail":{"attempts":2,"lastResult":"pending","nextAt":null},"kind":"query"})");
  const persistence::TimelineEntry discrepancy{
      5, "t", persistence::DiscrepancyEntry{7, "paid_after_close", R"({"b": 1.5})", std::nullopt}};
  EXPECT_EQ(to_json(discrepancy)["kind"], "discrepancy");
  EXPECT_EQ(to_json(discrepancy)["detail"]["detail"]["b"], 1.5);
  const persistence::TimelineEntry callback{5, "t", row()};
  EXPECT_EQ(to_json(callback)["kind"], "callback");
  EXPECT_FALSE(to_json(callback)["detail"].contains("paymentNo"));
  const persistence::TimelineEntry event{
      5, "t", persistence::EventEntry{"order.paid", "order.paid:o1", "o1", 100, std::nullopt}};
  EXPECT_EQ(to_json(event)["detail"]["amountCents"], 100);
  EXPECT_TRUE(to_json(event)["detail"]["detail"].is_null());
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::http

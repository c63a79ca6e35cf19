// Functional tests of SPEC §12 over real HTTP with real PostgreSQL and Redis: the raw request kept
// with each verified callback, callback search with keyset pages, one callback, replay through
// verification and the pipeline, a payment's timeline, and the console's static files.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "channels/hmac/hmac_channel.hpp"
#include "channels/stripe/stripe_channel.hpp"
#include "support/engine_fixture.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "functional-callback-log-token-58e1c2";
const std::string kStripeSecret = "whsec_functional_callback_log_stripe_7d";

EnvOverrides log_env() {
  return EnvOverrides{{"SEATFLOW_API_TOKEN", kToken},
                      {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                      {"SEATFLOW_SWEEPER", "off"},
                      {"SEATFLOW_STRIPE_WEBHOOK_SECRETS", kStripeSecret}};
}

json json_of(const Response& response) {
  return json::parse(response.body, nullptr, false);
}

Response call(const TestEngine& engine, std::string_view method, const std::string& target,
              const json& body = nullptr) {
  return engine.api(method, target, kToken, body.is_null() ? std::string() : body.dump());
}

// Percent-encodes a query value or path segment.
std::string encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      out += {'%', kHex[byte >> 4], kHex[byte & 15]};
    }
  }
  return out;
}

// An order with a pending hmac payment, made through the API; the show's seats are removed after.
class Booking {
 public:
  Booking(const TestEngine& engine, Stores& stores, const std::string& name, bool pay = true)
      : stores_(stores),
        order(stores.id("ord-" + name)),
        payment(stores.id("pay-" + name)),
        show(stores.id("show-" + name)) {
    const auto made = call(engine, "POST", "/api/orders",
                           {{"orderNo", order},
                            {"userId", "user-1"},
                            {"showId", show},
                            {"seatIds", {"A1"}},
                            {"amountCents", 5000}});
    EXPECT_EQ(made.status, 201) << made.body << made.error;
    if (pay) {
      const auto paid = call(engine, "POST", "/api/payments",
                             {{"orderNo", order}, {"paymentNo", payment}, {"channel", "hmac"}});
      EXPECT_EQ(paid.status, 201) << paid.body << paid.error;
    }
  }
  ~Booking() { (void)stores_.redis().command({"DEL", "seatflow:seats:{" + show + "}"}); }
  Booking(const Booking&) = delete;
  Booking& operator=(const Booking&) = delete;

 private:
  Stores& stores_;

 public:
  std::string order;
  std::string payment;
  std::string show;
};

json search(const TestEngine& engine, const std::string& query) {
  const auto response = call(engine, "GET", "/api/callbacks?" + query);
  EXPECT_EQ(response.status, 200) << query << ": " << response.body << response.error;
  return json_of(response);
}

std::vector<std::string> ids_of(const json& page) {
  std::vector<std::string> ids;
  for (const auto& row : page.value("callbacks", json::array())) {
    ids.push_back(row.value("callbackId", ""));
  }
  return ids;
}

TEST(CallbackLog, KeepsTheRawRequestOfAVerifiedCallbackAndNothingOfARejectedOne) {
  Stores stores;
  TestEngine engine(log_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  Booking b(engine, stores, "raw");
  const auto id = stores.id("cb-raw");
  const auto body = signed_body(id, b.payment, 1);
  // A sender that puts our own API token on the request: it must never be kept.
  const auto sent = engine.request(
      "POST", kHmacNotifyPath, body,
      {{"Content-Type", "application/json"}, {"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_EQ(sent.status, 200) << sent.body << sent.error;

  const auto one = call(engine, "GET", "/api/callbacks/" + encode(id));
  ASSERT_EQ(one.status, 200) << one.body;
  const auto row = json_of(one);
  EXPECT_EQ(row.value("rawBody", ""), body);
  EXPECT_EQ(row.value("rawHeaders", json()), json::object()) << "hmac reads no header";
  EXPECT_EQ(row.value("result", ""), "applied");
  EXPECT_EQ(row.value("httpStatus", 0), 200);
  EXPECT_EQ(row.value("paymentNo", ""), b.payment);
  EXPECT_EQ(row.value("orderNo", ""), b.order);
  EXPECT_EQ(row.value("channel", ""), "hmac");
  EXPECT_EQ(row.value("duplicateCount", -1), 0);
  pqxx::work tx(stores.pg());
  const auto kept = tx.exec_params1(
      "SELECT count(*) FROM payment_callback_log WHERE callback_id = $1 AND "
      "(position($2 in convert_from(raw_body, 'UTF8')) > 0 OR raw_headers::text LIKE '%uthoriz%')",
      id, std::string(kToken));
  EXPECT_EQ(kept[0].as<int>(), 0) << "the API token was stored with the callback";
  tx.commit();

  // A request whose signature fails leaves no row and no raw request: only a counter.
  const auto forged_id = stores.id("cb-forged");
  const auto forged = engine.notify(
      signed_body(forged_id, b.payment, 1, domain::unix_time_ms(), "some-other-secret-0123456789"));
  EXPECT_EQ(forged.status, 401) << forged.body;
  EXPECT_EQ(call(engine, "GET", "/api/callbacks/" + encode(forged_id)).status, 404);
  EXPECT_TRUE(ids_of(search(engine, "callbackId=" + encode(forged_id))).empty());
  EXPECT_FALSE(stores.log_row(forged_id).has_value());
}

TEST(CallbackLog, KeepsTheStripeSignatureHeaderOnlyAndReplaysItAsADuplicate) {
  Stores stores;
  TestEngine engine(log_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  Booking b(engine, stores, "stripe", false);
  const auto paid = call(engine, "POST", "/api/payments",
                         {{"orderNo", b.order}, {"paymentNo", b.payment}, {"channel", "stripe"}});
  ASSERT_EQ(paid.status, 201) << paid.body;
  const channels::StripeChannel signer(channels::StripeConfig{{kStripeSecret}});
  channels::StripeEvent event;
  event.id = stores.id("evt-stripe");
  event.payment_no = b.payment;
  event.payment_intent_id = stores.id("pi");
  event.amount = 5000;
  event.created_s = domain::unix_time_ms() / 1000;
  const auto body = channels::stripe_event_body(event);
  const auto header =
      channels::stripe_signature_header(signer.keys(), domain::unix_time_ms() / 1000, body);
  const auto sent = engine.request(
      "POST", "/api/payment/notify/stripe", body,
      {{"Content-Type", "application/json"}, {"Stripe-Signature", header}, {"X-Extra", "no"}});
  ASSERT_EQ(sent.status, 200) << sent.body << sent.error;

  const auto row = json_of(call(engine, "GET", "/api/callbacks/" + encode(event.id)));
  EXPECT_EQ(row.value("rawBody", ""), body);
  EXPECT_EQ(row.value("rawHeaders", json()), (json{{"stripe-signature", header}}));
  EXPECT_EQ(row.value("channel", ""), "stripe");

  const auto replay = call(engine, "POST", "/api/callbacks/" + encode(event.id) + "/replay");
  ASSERT_EQ(replay.status, 200) << replay.body;
  EXPECT_EQ(json_of(replay).value("result", ""), "duplicate") << replay.body;
  EXPECT_EQ(stores.await_duplicate_count(event.id, 1), 1);
}

TEST(CallbackLog, ReplayRunsTheStoredRequestThroughVerificationAndThePipeline) {
  Stores stores;
  TestEngine engine(log_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  Booking b(engine, stores, "replay");
  const auto id = stores.id("cb-replay");
  ASSERT_EQ(engine.notify(signed_body(id, b.payment, 1)).status, 200);

  const auto replay = call(engine, "POST", "/api/callbacks/" + encode(id) + "/replay");
  ASSERT_EQ(replay.status, 200) << replay.body;
  const auto answer = json_of(replay);
  EXPECT_EQ(answer.value("result", ""), "duplicate") << replay.body;
  EXPECT_EQ(answer.value("httpStatus", 0), 200);
  EXPECT_EQ(answer.value("callbackId", ""), id);
  EXPECT_EQ(stores.await_duplicate_count(id, 1), 1);
  EXPECT_EQ(stores.payment_status(b.payment), 1);

  EXPECT_EQ(call(engine, "POST", "/api/callbacks/" + encode(stores.id("none")) + "/replay").status,
            404);
  EXPECT_EQ(engine.api("POST", "/api/callbacks/" + encode(id) + "/replay", "wrong-token").status,
            401);
  EXPECT_EQ(call(engine, "GET", "/api/callbacks/" + encode(id) + "/replay").status, 405);

  // A stored request signed an hour ago: the notify path refuses it as stale, the authenticated
  // replay waives the window but still checks the signature under today's keys.
  Booking late(engine, stores, "replay-stale");
  const auto stale_id = stores.id("cb-stale");
  const auto stale_body =
      signed_body(stale_id, late.payment, 1, domain::unix_time_ms() - 3'600'000);
  EXPECT_EQ(engine.notify(stale_body).status, 401);
  const channels::HmacChannel hmac(channels::HmacConfig{{kTestSecret}});
  const channels::InboundRequest inbound{stale_body, nullptr, domain::unix_time_ms(), true};
  const auto verified = hmac.verify(inbound);
  ASSERT_TRUE(verified.ok());
  {
    pqxx::work tx(stores.pg());
    tx.exec_params(
        "INSERT INTO payment_callback_log (callback_id, channel, payment_no, status, "
        "  payload_sha256, received_at, raw_body) "
        "VALUES ($1, 'hmac', $2, 1, $3, now() - interval '1 hour', convert_to($4, 'UTF8'))",
        stale_id, late.payment, verified.value().payload_sha256, stale_body);
    tx.commit();
  }
  const auto revived = call(engine, "POST", "/api/callbacks/" + encode(stale_id) + "/replay");
  ASSERT_EQ(revived.status, 200) << revived.body;
  EXPECT_NE(json_of(revived).value("result", ""), "rejected_signature") << revived.body;
  EXPECT_EQ(stores.payment_status(late.payment), 1) << revived.body;

  // A stored request that no longer verifies under today's keys is refused, not applied.
  Booking forged(engine, stores, "replay-forged");
  const auto forged_id = stores.id("cb-forged-stored");
  const auto forged_body = signed_body(forged_id, forged.payment, 1, domain::unix_time_ms(),
                                       "a-retired-secret-abcdef0123456");
  {
    pqxx::work tx(stores.pg());
    tx.exec_params(
        "INSERT INTO payment_callback_log (callback_id, channel, payment_no, status, "
        "  payload_sha256, raw_body) VALUES ($1, 'hmac', $2, 1, 'x', convert_to($3, 'UTF8'))",
        forged_id, forged.payment, forged_body);
    tx.commit();
  }
  const auto refused = call(engine, "POST", "/api/callbacks/" + encode(forged_id) + "/replay");
  ASSERT_EQ(refused.status, 200) << refused.body;
  EXPECT_EQ(json_of(refused).value("result", ""), "rejected_signature") << refused.body;
  EXPECT_EQ(json_of(refused).value("httpStatus", 0), 401);
  EXPECT_EQ(stores.payment_status(forged.payment), 0);
}

TEST(CallbackLog, SearchFiltersNewestFirstInKeysetPagesAndNamesABadFilter) {
  Stores stores;
  TestEngine engine(log_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  Booking b(engine, stores, "search");
  std::vector<std::string> sent;
  for (int i = 0; i < 5; ++i) {
    sent.push_back(stores.id("cb-search-" + std::to_string(i)));
    ASSERT_EQ(engine.notify(signed_body(sent.back(), b.payment, 1)).status, 200);
  }
  ASSERT_EQ(engine.notify(signed_body(sent[2], b.payment, 1)).status, 200);  // a copy

  std::vector<std::string> paged;
  std::string cursor;
  int pages = 0;
  do {
    const auto page = search(engine, "paymentNo=" + encode(b.payment) + "&limit=2" +
                                         (cursor.empty() ? "" : "&cursor=" + encode(cursor)));
    const auto ids = ids_of(page);
    EXPECT_LE(ids.size(), 2U);
    paged.insert(paged.end(), ids.begin(), ids.end());
    cursor = page.value("nextCursor", json()).is_string() ? page["nextCursor"].get<std::string>()
                                                          : std::string();
    ++pages;
  } while (!cursor.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  std::vector<std::string> newest_first(sent.rbegin(), sent.rend());
  EXPECT_EQ(paged, newest_first) << "newest first, each row once";

  EXPECT_EQ(ids_of(search(engine, "orderNo=" + encode(b.order))).size(), 5U);
  EXPECT_EQ(ids_of(search(engine, "paymentNo=" + encode(b.payment) + "&result=applied")),
            std::vector<std::string>{sent[0]});
  EXPECT_EQ(ids_of(search(engine, "paymentNo=" + encode(b.payment) + "&result=ignored")).size(),
            4U);
  EXPECT_EQ(stores.await_duplicate_count(sent[2], 1), 1);
  EXPECT_EQ(ids_of(search(engine, "paymentNo=" + encode(b.payment) + "&result=duplicate")),
            std::vector<std::string>{sent[2]});
  EXPECT_EQ(ids_of(search(engine, "paymentNo=" + encode(b.payment) + "&channel=stripe")).size(),
            0U);
  EXPECT_EQ(ids_of(search(engine, "callbackId=" + encode(sent[3]) + "&channel=hmac")),
            std::vector<std::string>{sent[3]});
  EXPECT_EQ(ids_of(search(engine, "paymentNo=" + encode(b.payment) +
                                      "&to=" + encode("2000-01-01T00:00:00Z")))
                .size(),
            0U);
  EXPECT_EQ(ids_of(search(engine, "paymentNo=" + encode(b.payment) +
                                      "&from=" + encode("2000-01-01T00:00:00+08:00")))
                .size(),
            5U);

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"limit=0", "limit"},
      {"limit=201", "limit"},
      {"limit=ten", "limit"},
      {"channel=paypal", "channel"},
      {"result=applied_twice", "result"},
      {"from=yesterday", "from"},
      {"to=" + encode("2026-02-30T00:00:00Z"), "to"},
      {"from=" + encode("2026-12-01T10:00:00"), "from"},
      {"cursor=zzz", "cursor"},
      {"colour=blue", "colour"},
      {"paymentNo=a&paymentNo=b", "paymentNo"},
      {"paymentNo=%zz", "paymentNo"},
  };
  for (const auto& [query, field] : bad) {
    const auto response = call(engine, "GET", "/api/callbacks?" + query);
    EXPECT_EQ(response.status, 400) << query << ": " << response.body;
    EXPECT_EQ(json_of(response).value("field", ""), field) << query << ": " << response.body;
  }
  EXPECT_EQ(engine.api("GET", "/api/callbacks", "").status, 401);
}

TEST(CallbackLog, TimelineShowsCallbacksEventsAndDiscrepanciesInTimeOrder) {
  Stores stores;
  TestEngine engine(log_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  Booking b(engine, stores, "timeline");
  ASSERT_EQ(call(engine, "POST", "/api/payments/" + b.payment + "/close").status, 200);
  const auto late = stores.id("cb-late");
  ASSERT_EQ(engine.notify(signed_body(late, b.payment, 1)).status, 200);
  {
    // The active query's record of its last answer (SPEC §10), as the scheduler leaves it.
    pqxx::work tx(stores.pg());
    tx.exec_params(
        "INSERT INTO payment_query (payment_no, attempts, next_at, last_result, last_at) "
        "VALUES ($1, 2, 'infinity', 'pending', now()) ON CONFLICT (payment_no) DO UPDATE "
        "SET attempts = 2, next_at = 'infinity', last_result = 'pending', last_at = now()",
        b.payment);
    tx.commit();
  }

  const auto response = call(engine, "GET", "/api/payments/" + encode(b.payment) + "/timeline");
  ASSERT_EQ(response.status, 200) << response.body;
  const auto timeline = json_of(response);
  EXPECT_EQ(timeline["payment"].value("paymentNo", ""), b.payment);
  EXPECT_EQ(timeline["payment"].value("status", ""), "CLOSED");
  const auto& entries = timeline["entries"];
  ASSERT_TRUE(entries.is_array());
  std::vector<std::string> kinds;
  std::string previous;
  bool saw_late = false;
  bool saw_discrepancy = false;
  for (const auto& entry : entries) {
    kinds.push_back(entry.value("kind", ""));
    const auto at = entry.value("at", "");
    EXPECT_LE(previous, at) << "entries in time order: " << response.body;
    previous = at;
    saw_late = saw_late || (entry["kind"] == "callback" && entry["detail"]["callbackId"] == late &&
                            entry["detail"]["result"] == "discrepancy");
    saw_discrepancy = saw_discrepancy || (entry["kind"] == "discrepancy" &&
                                          entry["detail"]["kind"] == "paid_after_cancel");
  }
  EXPECT_TRUE(saw_late) << response.body;
  EXPECT_TRUE(saw_discrepancy) << response.body;
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "event"), kinds.end()) << response.body;
  // The moves the timeline derives from the rows are exactly the events the moves emitted.
  std::map<std::string, std::string> shown;  // event id → "orderNo amountCents detail"
  for (const auto& entry : entries) {
    if (entry["kind"] == "event") {
      const auto& d = entry["detail"];
      shown[d.value("eventId", "")] =
          d.value("orderNo", "") + " " + std::to_string(d.value("amountCents", -1)) + " " +
          (d["detail"].is_string() ? d["detail"].get<std::string>() : "");
    }
  }
  std::map<std::string, std::string> emitted;
  for (const auto& event : stores.events(b.payment, b.order)) {
    emitted[event.event_id] =
        event.order_no + " " + std::to_string(event.amount_cents) + " " + event.detail;
  }
  EXPECT_EQ(shown, emitted) << response.body;
  EXPECT_EQ(shown.count("payment.closed:" + b.payment), 1u) << response.body;
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.back(), "query") << "the query answered last: " << response.body;
  EXPECT_EQ(entries.back()["detail"].value("lastResult", ""), "pending") << response.body;
  EXPECT_EQ(entries.back()["detail"].value("attempts", 0), 2) << response.body;
  EXPECT_TRUE(entries.back()["detail"]["nextAt"].is_null()) << "a finished schedule has no next";

  EXPECT_EQ(call(engine, "GET", "/api/payments/" + stores.id("nope") + "/timeline").status, 404);
}

TEST(Console, IsServedWithItsContentTypesAndAStrictContentSecurityPolicy) {
  TestEngine engine(log_env());
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto page = engine.get("/console");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
  const auto csp = page.header("content-security-policy");
  EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
  EXPECT_EQ(page.header("x-content-type-options"), "nosniff");
  EXPECT_EQ(page.body.find("<script>"), std::string::npos) << "no inline script";
  EXPECT_EQ(page.body.find("style="), std::string::npos) << "no inline style";
  const auto script = engine.get("/console/app.js");
  EXPECT_EQ(script.status, 200);
  EXPECT_EQ(script.header("content-type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(script.body.find("innerHTML"), std::string::npos);
  EXPECT_EQ(engine.get("/console/style.css").header("content-type"), "text/css; charset=utf-8");
  EXPECT_EQ(engine.get("/console/nope.js").status, 404);
  EXPECT_EQ(engine.get("/console/../metrics").status, 404);
  EXPECT_EQ(engine.request("POST", "/console").status, 405);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

// Functional tests over real HTTP: orders/payments API, order sweeper, dev mock gateway (SPEC §7).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/ids.hpp"
#include "http/auth.hpp"
#include "support/engine_fixture.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "functional-api-token-3b9e71c5d0a4";
constexpr const char* kJwtKey = "functional-api-jwt-key-own-7e1d09b4";

// API engine defaults: the token set, no automatic mock callback and no sweeper (the tests
// control time; a sweeper would also touch other tests' rows in the shared database).
EnvOverrides api_env(const EnvOverrides& extra = {}) {
  EnvOverrides env{{"SEATFLOW_API_TOKEN", kToken},
                   {"SEATFLOW_API_JWT_KEY", kJwtKey},
                   {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                   {"SEATFLOW_SWEEPER", "off"}};
  for (const auto& [name, value] : extra) {
    env[name] = value;
  }
  return env;
}

json json_of(const Response& response) {
  return json::parse(response.body, nullptr, false);
}

Response call(const TestEngine& engine, std::string_view method, std::string_view target,
              const json& body = nullptr) {
  return engine.api(method, target, kToken, body.is_null() ? std::string() : body.dump());
}

std::string text(const json& doc, const char* key) {
  return doc.is_object() && doc.contains(key) && doc[key].is_string() ? doc[key].get<std::string>()
                                                                      : std::string();
}

// Seat hashes of shows made through the API (Stores deletes only the shows it seeded itself).
class ShowKeys {
 public:
  explicit ShowKeys(Stores& stores) : stores_(stores) {}
  ~ShowKeys() {
    for (const auto& show : shows_) {
      (void)stores_.redis().command({"DEL", "seatflow:seats:{" + show + "}"});
    }
  }
  ShowKeys(const ShowKeys&) = delete;
  ShowKeys& operator=(const ShowKeys&) = delete;
  std::string add(const std::string& show) {
    shows_.push_back(show);
    return show;
  }

 private:
  Stores& stores_;
  std::vector<std::string> shows_;
};

// An order of two seats and its hmac payment, ids unique to the test.
struct Booking {
  Booking(Stores& stores, ShowKeys& shows, const std::string& name)
      : order(stores.id("ord-" + name)),
        payment(stores.id("pay-" + name)),
        show(shows.add(stores.id("show-" + name))) {}
  std::string order;
  std::string payment;
  std::string show;
  std::vector<std::string> seats{"A1", "A2"};
  std::int64_t amount = 5000;
};

json order_request(const Booking& b) {
  return {{"orderNo", b.order},
          {"userId", "user-1"},
          {"showId", b.show},
          {"seatIds", b.seats},
          {"amountCents", b.amount}};
}

json payment_request(const Booking& b, const std::string& channel = "hmac") {
  return {{"orderNo", b.order}, {"paymentNo", b.payment}, {"channel", channel}};
}

// Creates the order (and its payment) through the API; false (with a test failure) otherwise.
bool book(const TestEngine& engine, const Booking& b, bool with_payment = true) {
  const auto order = call(engine, "POST", "/api/orders", order_request(b));
  EXPECT_EQ(order.status, 201) << order.body << order.error;
  if (order.status != 201 || !with_payment) {
    return order.status == 201;
  }
  const auto payment = call(engine, "POST", "/api/payments", payment_request(b));
  EXPECT_EQ(payment.status, 201) << payment.body << payment.error;
  return payment.status == 201;
}

// A signed hmac callback for the payment, with a fresh callback id.
Response callback(const TestEngine& engine, Stores& stores, const std::string& payment,
                  const std::string& name, int status = 1) {
  return engine.notify(signed_body(stores.id(name), payment, status));
}

void expect_seats(Stores& stores, const Booking& b, const std::string& value) {
  for (const auto& seat : b.seats) {
    EXPECT_EQ(stores.seat(b.show, seat), value) << "seat " << seat << " of " << b.show;
  }
}

json get_payment(const TestEngine& engine, const std::string& payment) {
  const auto response = call(engine, "GET", "/api/payments/" + payment);
  EXPECT_EQ(response.status, 200) << response.body << response.error;
  return json_of(response);
}

json get_order(const TestEngine& engine, const std::string& order) {
  const auto response = call(engine, "GET", "/api/orders/" + order);
  EXPECT_EQ(response.status, 200) << response.body << response.error;
  return json_of(response);
}

// The discrepancies of one payment as GET /api/discrepancies lists them.
std::vector<json> listed_discrepancies(const TestEngine& engine, const std::string& payment,
                                       bool open_only = true) {
  const auto response =
      call(engine, "GET",
           open_only ? "/api/discrepancies?limit=500" : "/api/discrepancies?open=false&limit=500");
  EXPECT_EQ(response.status, 200) << response.body << response.error;
  std::vector<json> out;
  for (const auto& row : json_of(response)) {
    if (text(row, "paymentNo") == payment) {
      out.push_back(row);
    }
  }
  return out;
}

int order_rows(Stores& stores, const std::string& order) {
  pqxx::work tx(stores.pg());
  return tx.exec_params1("SELECT count(*) FROM order_info WHERE order_no = $1", order)[0].as<int>();
}

std::vector<std::string> callback_ids(Stores& stores, const std::string& payment) {
  pqxx::work tx(stores.pg());
  std::vector<std::string> ids;
  for (const auto& row : tx.exec_params("SELECT callback_id FROM payment_callback_log WHERE "
                                        "payment_no = $1 ORDER BY received_at",
                                        payment)) {
    ids.push_back(row[0].as<std::string>());
  }
  return ids;
}

std::string jwt(const std::string& payload) {
  return http::sign_jwt_hs256(kJwtKey, payload);
}

std::string claims_exp(std::int64_t exp_s) {
  return R"({"sub":"ops","exp":)" + std::to_string(exp_s) + "}";
}

std::int64_t now_s() {
  return domain::unix_time_ms() / 1000;
}

// ---- authentication ------------------------------------------------------------------------

TEST(ApiAuth, BearerTokenOrHs256JwtIsRequired) {
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  const std::string target = "/api/discrepancies?limit=1";
  const auto expect_401 = [&](const Response& response, const char* what) {
    EXPECT_EQ(response.status, 401) << what << ": " << response.body << response.error;
    EXPECT_EQ(text(json_of(response), "error"), "missing or invalid bearer token") << what;
  };
  expect_401(engine.api("GET", target, ""), "no Authorization");
  expect_401(engine.api("GET", target, "wrong-token"), "wrong token");
  expect_401(engine.request("GET", target, {}, {{"Authorization", "Bearer "}}), "Bearer only");
  expect_401(engine.request("GET", target, {}, {{"Authorization", std::string("Basic ") + kToken}}),
             "Basic scheme");
  expect_401(engine.api("GET", target, jwt(claims_exp(now_s() - 60))), "expired JWT");
  expect_401(engine.api("GET", target, jwt(R"({"sub":"ops"})")), "JWT without exp");
  expect_401(engine.api("GET", target, jwt(claims_exp(now_s() + 7200))),
             "JWT past SEATFLOW_API_JWT_LIFETIME_MAX (1 h)");
  expect_401(engine.api("GET", target, http::sign_jwt_hs256(kToken, claims_exp(now_s() + 300))),
             "JWT signed with the bearer token");
  expect_401(engine.api("GET", target, http::sign_jwt_hs256("another-secret-123", "{}")),
             "JWT signed with another key");
  expect_401(engine.api("GET", target,
                        http::base64url_encode(R"({"alg":"none","typ":"JWT"})") + "." +
                            http::base64url_encode(R"({"sub":"ops"})") + "."),
             "alg none");

  const auto with_token = engine.api("GET", target, kToken);
  EXPECT_EQ(with_token.status, 200) << with_token.body << with_token.error;
  EXPECT_TRUE(json_of(with_token).is_array()) << with_token.body;
  const auto with_jwt = engine.api("GET", target, jwt(claims_exp(now_s() + 300)));
  EXPECT_EQ(with_jwt.status, 200) << with_jwt.body << with_jwt.error;
  EXPECT_TRUE(json_of(with_jwt).is_array()) << with_jwt.body;
}

TEST(ApiAuth, UnauthorizedWriteChangesNothing) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  const auto response = engine.api("POST", "/api/orders", "wrong-token", order_request(b).dump());
  EXPECT_EQ(response.status, 401) << response.body << response.error;
  EXPECT_EQ(order_rows(stores, b.order), 0);
  expect_seats(stores, b, "");
}

// Regression test (fixed in http/auth.cpp): a JWT whose header has a non-string "alg"
// ({"alg":256}) makes Authenticator::check throw nlohmann type_error 302; the server's catch
// answers 500 "internal error" and logs an error. The alg check comes before the signature check,
// so any unauthenticated client can do it. Expected 401; actual 500.
TEST(ApiAuth, JwtWithNonStringAlgIsUnauthorizedNotAServerError) {
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  const auto forged = http::base64url_encode(R"({"alg":256})") + "." +
                      http::base64url_encode("{}") + "." + http::base64url_encode("sig");
  const auto response = engine.api("GET", "/api/discrepancies", forged);
  EXPECT_EQ(response.status, 401) << response.body << response.error;
  EXPECT_EQ(engine.get("/healthz").status, 200);
}

TEST(ApiAuth, NotifyPathNeedsNoToken) {
  Stores stores;
  const auto payment = stores.id("pay");
  const auto order = stores.id("ord");
  stores.create_pending(payment, order, stores.id("show"), {"A1"});
  const auto other = stores.id("pay2");
  const auto other_order = stores.id("ord2");
  stores.create_pending(other, other_order, stores.id("show2"), {"A1"});
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());

  const auto response = engine.notify(signed_body(stores.id("cb1"), payment, 1));
  EXPECT_EQ(response.status, 200) << response.body << response.error;
  EXPECT_EQ(response.body, "success");
  EXPECT_EQ(stores.payment_status(payment), 1);
  // A wrong bearer token on the notify path is ignored: its only guard is the signature.
  const auto with_bad_token = engine.request(
      "POST", kHmacNotifyPath, signed_body(stores.id("cb2"), other, 1),
      {{"Content-Type", "application/json"}, {"Authorization", "Bearer wrong-token"}});
  EXPECT_EQ(with_bad_token.status, 200) << with_bad_token.body << with_bad_token.error;
  EXPECT_EQ(stores.payment_status(other), 1);
}

TEST(ApiAuth, ProdWithoutTokenAnswersApiDisabled) {
  Stores stores;
  const auto payment = stores.id("pay");
  stores.create_pending(payment, stores.id("ord"), stores.id("show"), {"A1"});
  TestEngine engine(api_env({{"SEATFLOW_PROFILE", "prod"}, {"SEATFLOW_API_TOKEN", std::nullopt}}));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  for (const std::string token : {"", "anything", "seatflow-dev-only-api-token"}) {
    const auto response = engine.api("GET", "/api/discrepancies", token);
    EXPECT_EQ(response.status, 401) << response.body << response.error;
    EXPECT_NE(text(json_of(response), "error").find("API disabled"), std::string::npos)
        << response.body;
  }
  const auto post = engine.api("POST", "/api/orders", "anything", "{}");
  EXPECT_EQ(post.status, 401) << post.body;
  // Callbacks still work: the notify path needs no token.
  const auto notify = engine.notify(signed_body(stores.id("cb1"), payment, 1));
  EXPECT_EQ(notify.status, 200) << notify.body << notify.error;
  EXPECT_EQ(stores.payment_status(payment), 1);
}

TEST(ApiAuth, DevProfileWithoutTokenUsesTheSelfNamingDevToken) {
  TestEngine engine(api_env({{"SEATFLOW_API_TOKEN", std::nullopt}}));
  ASSERT_TRUE(engine.healthy());
  EXPECT_EQ(engine.api("GET", "/api/discrepancies?limit=1", "seatflow-dev-only-api-token").status,
            200);
  EXPECT_EQ(engine.api("GET", "/api/discrepancies?limit=1", kToken).status, 401);
  EXPECT_EQ(engine.api("GET", "/api/discrepancies?limit=1", "").status, 401);
}

// ---- orders -------------------------------------------------------------------------------

TEST(Orders, CreateLocksTheSeatsAndReturnsThePendingOrder) {
  Stores stores;
  ShowKeys shows(stores);
  Booking b(stores, shows, "a");
  b.amount = 12'345;
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());

  const auto response = call(engine, "POST", "/api/orders", order_request(b));
  ASSERT_EQ(response.status, 201) << response.body << response.error;
  EXPECT_EQ(response.header("content-type"), "application/json");
  const auto created = json_of(response);
  ASSERT_TRUE(created.is_object()) << response.body;
  EXPECT_EQ(text(created, "orderNo"), b.order);
  EXPECT_EQ(text(created, "status"), "PENDING");
  EXPECT_EQ(created.value("statusCode", -1), 0);
  EXPECT_EQ(created.value("seatIds", json()), json(b.seats));
  EXPECT_EQ(text(created, "showId"), b.show);
  EXPECT_EQ(text(created, "userId"), "user-1");
  EXPECT_EQ(created.value("amountCents", json()), json(12'345));
  EXPECT_FALSE(text(created, "expiresAt").empty()) << response.body;
  EXPECT_TRUE(created.value("paymentNo", json(1)).is_null()) << response.body;
  expect_seats(stores, b, "1:" + b.order);
  EXPECT_EQ(stores.order_status(b.order), 0);
  {
    // The default timeout is 15 minutes.
    pqxx::work tx(stores.pg());
    EXPECT_TRUE(tx.exec_params1("SELECT expires_at BETWEEN now() + interval '14 minutes' AND "
                                "now() + interval '16 minutes' FROM order_info WHERE order_no = $1",
                                b.order)[0]
                    .as<bool>());
  }

  const auto fetched = get_order(engine, b.order);
  EXPECT_EQ(text(fetched, "orderNo"), b.order);
  EXPECT_EQ(text(fetched, "status"), "PENDING");
  EXPECT_EQ(fetched.value("seatIds", json()), json(b.seats));
  const auto unknown = call(engine, "GET", "/api/orders/" + stores.id("no-such-order"));
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  EXPECT_FALSE(text(json_of(unknown), "error").empty()) << unknown.body;
  // A number no store could hold is the request's fault, named, before any store sees it.
  const std::string too_long(domain::id_bytes_max + 1, 'o');
  for (const auto& [target, field] :
       {std::pair{"/api/orders/" + too_long, "orderNo"},
        std::pair{"/api/payments/" + too_long, "paymentNo"},
        std::pair{"/api/payments/" + too_long + "/close", "paymentNo"},
        std::pair{"/api/payments/" + too_long + "/refund", "paymentNo"}}) {
    const auto method = target.ends_with("close") || target.ends_with("refund") ? "POST" : "GET";
    const auto refused = call(engine, method, target);
    EXPECT_EQ(refused.status, 400) << target << " " << refused.body;
    EXPECT_EQ(text(json_of(refused), "field"), field) << refused.body;
  }
}

TEST(Orders, TakenSeatIsConflictNamingTheSeatAndChangesNothing) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking first(stores, shows, "a");
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, first, false));

  Booking second(stores, shows, "b");
  second.show = first.show;
  second.seats = {"B1", "A2", "B2"};
  const auto response = call(engine, "POST", "/api/orders", order_request(second));
  EXPECT_EQ(response.status, 409) << response.body << response.error;
  const auto body = json_of(response);
  EXPECT_EQ(text(body, "seatId"), "A2") << response.body;
  EXPECT_NE(text(body, "error").find("A2"), std::string::npos) << response.body;

  EXPECT_EQ(order_rows(stores, second.order), 0);
  EXPECT_EQ(call(engine, "GET", "/api/orders/" + second.order).status, 404);
  EXPECT_EQ(stores.seat(first.show, "B1"), "");
  EXPECT_EQ(stores.seat(first.show, "B2"), "");
  expect_seats(stores, first, "1:" + first.order);
}

TEST(Orders, DuplicateOrderNoIsConflictAndChangesNothing) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, b, false));

  auto again = order_request(b);
  again["seatIds"] = {"C1"};
  const auto response = call(engine, "POST", "/api/orders", again);
  EXPECT_EQ(response.status, 409) << response.body << response.error;
  EXPECT_EQ(text(json_of(response), "orderNo"), b.order) << response.body;
  EXPECT_EQ(stores.seat(b.show, "C1"), "");
  expect_seats(stores, b, "1:" + b.order);
  EXPECT_EQ(get_order(engine, b.order).value("seatIds", json()), json(b.seats));
}

TEST(Orders, EveryValidationRejectionNamesTheField) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  const auto base = order_request(b);
  const auto without = [&](const char* key) {
    auto body = base;
    body.erase(key);
    return body.dump();
  };
  const auto with = [&](const char* key, const json& value) {
    auto body = base;
    body[key] = value;
    return body.dump();
  };
  std::vector<std::string> too_many;
  for (int i = 0; i < 65; ++i) {
    too_many.push_back("S" + std::to_string(i));
  }
  struct Case {
    std::string body;
    std::string field;  // "" = the body itself
  };
  const std::vector<Case> cases = {
      {without("showId"), "showId"},
      {with("showId", ""), "showId"},
      {with("showId", "a b"), "showId"},
      {with("showId", 7), "showId"},
      {without("userId"), "userId"},
      {with("userId", nullptr), "userId"},
      {with("orderNo", "bad order"), "orderNo"},
      {without("seatIds"), "seatIds"},
      {with("seatIds", json::array()), "seatIds"},
      {with("seatIds", {"A1", "A1"}), "seatIds"},
      {with("seatIds", "A1"), "seatIds"},
      {with("seatIds", json::array({json::array({"A1", "A2"})})), "seatIds"},
      {with("seatIds", {{"A1", "A2"}}), "seatIds"},  // an object
      {with("seatIds", {1, 2}), "seatIds"},
      {with("seatIds", {"A1", ""}), "seatIds"},
      {with("seatIds", too_many), "seatIds"},
      {without("amountCents"), "amountCents"},
      {with("amountCents", 0), "amountCents"},
      {with("amountCents", -1), "amountCents"},
      {with("amountCents", 12.5), "amountCents"},
      {with("amountCents", 5000.0), "amountCents"},
      {with("amountCents", "5000"), "amountCents"},
      {with("amountCents", nullptr), "amountCents"},
      {"{", ""},
      {"", ""},
      {"not json", ""},
      {json::array({base}).dump(), ""},
      {"42", ""},
  };
  for (const auto& c : cases) {
    const auto response = engine.api("POST", "/api/orders", kToken, c.body);
    EXPECT_EQ(response.status, 400) << c.body << " → " << response.body << response.error;
    const auto answer = json_of(response);
    EXPECT_FALSE(text(answer, "error").empty()) << c.body << " → " << response.body;
    if (c.field.empty()) {
      EXPECT_FALSE(answer.contains("field")) << c.body << " → " << response.body;
    } else {
      EXPECT_EQ(text(answer, "field"), c.field) << c.body << " → " << response.body;
    }
  }
  EXPECT_EQ(order_rows(stores, b.order), 0);
  expect_seats(stores, b, "");

  // The bounds themselves are accepted: 64 seats, one cent.
  auto most = base;
  too_many.pop_back();
  most["seatIds"] = too_many;
  most["amountCents"] = 1;
  const auto accepted = call(engine, "POST", "/api/orders", most);
  EXPECT_EQ(accepted.status, 201) << accepted.body << accepted.error;
  EXPECT_EQ(stores.seat(b.show, "S63"), "1:" + b.order);
}

// ---- payments -----------------------------------------------------------------------------

TEST(Payments, CreateCopiesTheAmountAndAllowsOnePerOrder) {
  Stores stores;
  ShowKeys shows(stores);
  Booking b(stores, shows, "a");
  b.amount = 7300;
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, b, false));

  auto request = payment_request(b);
  request["amountCents"] = 1;  // not the client's to choose
  const auto response = call(engine, "POST", "/api/payments", request);
  ASSERT_EQ(response.status, 201) << response.body << response.error;
  const auto created = json_of(response);
  EXPECT_EQ(text(created, "paymentNo"), b.payment);
  EXPECT_EQ(text(created, "orderNo"), b.order);
  EXPECT_EQ(text(created, "channel"), "hmac");
  EXPECT_EQ(created.value("amountCents", json()), json(7300));
  EXPECT_EQ(text(created, "status"), "PENDING");
  EXPECT_EQ(text(created, "orderStatus"), "PENDING");
  EXPECT_TRUE(created.value("paidAt", json(1)).is_null()) << response.body;
  EXPECT_EQ(stores.payment_status(b.payment), 0);

  auto second = payment_request(b);
  second["paymentNo"] = stores.id("pay-second");
  const auto duplicate = call(engine, "POST", "/api/payments", second);
  EXPECT_EQ(duplicate.status, 409) << duplicate.body << duplicate.error;
  EXPECT_EQ(text(json_of(duplicate), "paymentNo"), b.payment) << duplicate.body;
  EXPECT_EQ(call(engine, "GET", "/api/payments/" + stores.id("pay-second")).status, 404);

  const auto fetched = get_payment(engine, b.payment);
  EXPECT_EQ(text(fetched, "status"), "PENDING");
  EXPECT_EQ(fetched.value("amountCents", json()), json(7300));
  EXPECT_EQ(text(get_order(engine, b.order), "paymentNo"), b.payment);
  // A paymentNo already taken by another order's payment.
  const Booking other(stores, shows, "b");
  ASSERT_TRUE(book(engine, other, false));
  auto taken = payment_request(other);
  taken["paymentNo"] = b.payment;
  const auto clash = call(engine, "POST", "/api/payments", taken);
  EXPECT_EQ(clash.status, 409) << clash.body << clash.error;
  EXPECT_TRUE(get_order(engine, other.order).value("paymentNo", json(1)).is_null());
  EXPECT_EQ(text(get_payment(engine, b.payment), "orderNo"), b.order);

  const auto unknown_payment = call(engine, "GET", "/api/payments/" + stores.id("no-such-pay"));
  EXPECT_EQ(unknown_payment.status, 404) << unknown_payment.body;
}

TEST(Payments, RejectionsUnknownOrderBadChannelAndOrderNotPending) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, b, false));

  const json unknown = {
      {"orderNo", stores.id("no-such-order")}, {"paymentNo", stores.id("p1")}, {"channel", "hmac"}};
  const auto not_found = call(engine, "POST", "/api/payments", unknown);
  EXPECT_EQ(not_found.status, 404) << not_found.body << not_found.error;

  for (const auto& channel : {json("paypal"), json("HMAC"), json(""), json(1), json(nullptr)}) {
    auto request = payment_request(b);
    request["channel"] = channel;
    const auto response = call(engine, "POST", "/api/payments", request);
    EXPECT_EQ(response.status, 400) << channel << " → " << response.body;
    EXPECT_EQ(text(json_of(response), "field"), "channel") << response.body;
  }
  auto no_order = payment_request(b);
  no_order.erase("orderNo");
  const auto missing_order = call(engine, "POST", "/api/payments", no_order);
  EXPECT_EQ(missing_order.status, 400) << missing_order.body;
  EXPECT_EQ(text(json_of(missing_order), "field"), "orderNo") << missing_order.body;
  EXPECT_EQ(call(engine, "GET", "/api/payments/" + b.payment).status, 404);

  // An order that is no longer pending takes no payment.
  const auto cancelled = stores.id("ord-cancelled");
  stores.create_order(cancelled, shows.add(stores.id("show-c")), {"C1"}, 5000, 2);
  const json late = {
      {"orderNo", cancelled}, {"paymentNo", stores.id("pay-c")}, {"channel", "hmac"}};
  const auto conflict = call(engine, "POST", "/api/payments", late);
  EXPECT_EQ(conflict.status, 409) << conflict.body << conflict.error;
  EXPECT_EQ(text(json_of(conflict), "error"), "the order is not pending") << conflict.body;
  EXPECT_EQ(call(engine, "GET", "/api/payments/" + stores.id("pay-c")).status, 404);
}

// ---- close --------------------------------------------------------------------------------

TEST(Close, PendingPaymentClosesTheOrderFreesTheSeatsAndALateSuccessIsADiscrepancy) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, b));

  const auto closed = call(engine, "POST", "/api/payments/" + b.payment + "/close");
  ASSERT_EQ(closed.status, 200) << closed.body << closed.error;
  EXPECT_EQ(text(json_of(closed), "status"), "CLOSED") << closed.body;
  EXPECT_EQ(text(json_of(closed), "orderStatus"), "CANCELLED") << closed.body;
  EXPECT_EQ(stores.payment_status(b.payment), 3);
  EXPECT_EQ(stores.order_status(b.order), 2);
  expect_seats(stores, b, "");
  EXPECT_EQ(text(get_order(engine, b.order), "status"), "CANCELLED");

  const auto again = call(engine, "POST", "/api/payments/" + b.payment + "/close");
  EXPECT_EQ(again.status, 200) << again.body << again.error;
  EXPECT_EQ(text(json_of(again), "status"), "CLOSED") << again.body;

  const auto late = callback(engine, stores, b.payment, "cb-late");
  EXPECT_EQ(late.status, 200) << late.body << late.error;
  EXPECT_EQ(late.body, "success");
  EXPECT_EQ(stores.payment_status(b.payment), 3);
  EXPECT_EQ(stores.order_status(b.order), 2);
  expect_seats(stores, b, "");
  EXPECT_EQ(stores.discrepancies(b.payment, "paid_after_cancel"), 1);
  const auto listed = listed_discrepancies(engine, b.payment);
  ASSERT_EQ(listed.size(), 1U);
  EXPECT_EQ(text(listed[0], "kind"), "paid_after_cancel");
  EXPECT_EQ(text(listed[0], "orderNo"), b.order);
  EXPECT_TRUE(listed[0].value("resolvedAt", json(1)).is_null());
  // Another late success (another callback id): still one open discrepancy of that kind.
  const auto later = callback(engine, stores, b.payment, "cb-later");
  EXPECT_EQ(later.status, 200) << later.body << later.error;
  EXPECT_EQ(stores.discrepancies(b.payment, "paid_after_cancel"), 1);

  // The freed seats can be booked again.
  Booking next(stores, shows, "b");
  next.show = b.show;
  EXPECT_TRUE(book(engine, next, false));
  expect_seats(stores, next, "1:" + next.order);
  // A late success for the closed payment never takes them back.
  const auto after_rebook = callback(engine, stores, b.payment, "cb-after-rebook");
  EXPECT_EQ(after_rebook.status, 200) << after_rebook.body << after_rebook.error;
  expect_seats(stores, next, "1:" + next.order);
  EXPECT_EQ(stores.order_status(b.order), 2);

  EXPECT_EQ(call(engine, "POST", "/api/payments/" + stores.id("no-such-pay") + "/close").status,
            404);
}

TEST(Close, FailedPaymentCanBeClosed) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, b));
  const auto failed = callback(engine, stores, b.payment, "cb-fail", 2);
  ASSERT_EQ(failed.status, 200) << failed.body << failed.error;
  ASSERT_EQ(stores.payment_status(b.payment), 2);

  const auto closed = call(engine, "POST", "/api/payments/" + b.payment + "/close");
  EXPECT_EQ(closed.status, 200) << closed.body << closed.error;
  EXPECT_EQ(text(json_of(closed), "status"), "CLOSED") << closed.body;
  EXPECT_EQ(stores.order_status(b.order), 2);
  expect_seats(stores, b, "");
}

TEST(Close, PaidPaymentIsConflictAndTheSeatsStaySold) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, b));
  const auto paid = callback(engine, stores, b.payment, "cb-pay");
  ASSERT_EQ(paid.status, 200) << paid.body << paid.error;
  ASSERT_EQ(stores.payment_status(b.payment), 1);

  const auto closed = call(engine, "POST", "/api/payments/" + b.payment + "/close");
  EXPECT_EQ(closed.status, 409) << closed.body << closed.error;
  EXPECT_EQ(text(json_of(closed), "error"), "already paid") << closed.body;
  EXPECT_EQ(stores.payment_status(b.payment), 1);
  EXPECT_EQ(stores.order_status(b.order), 1);
  expect_seats(stores, b, "2:" + b.order);
  const auto fetched = get_payment(engine, b.payment);
  EXPECT_EQ(text(fetched, "status"), "SUCCESS");
  EXPECT_EQ(text(fetched, "orderStatus"), "PAID");
  EXPECT_FALSE(text(fetched, "paidAt").empty());
}

// ---- refund -------------------------------------------------------------------------------

TEST(Refund, PaidPaymentRefundsReleasesTheSeatsAndALateSuccessIsADiscrepancy) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, b));
  ASSERT_EQ(callback(engine, stores, b.payment, "cb-pay").status, 200);
  expect_seats(stores, b, "2:" + b.order);

  const auto refunded = call(engine, "POST", "/api/payments/" + b.payment + "/refund");
  ASSERT_EQ(refunded.status, 200) << refunded.body << refunded.error;
  EXPECT_EQ(text(json_of(refunded), "status"), "REFUNDED") << refunded.body;
  EXPECT_EQ(text(json_of(refunded), "orderStatus"), "REFUNDED") << refunded.body;
  EXPECT_EQ(stores.payment_status(b.payment), 4);
  EXPECT_EQ(stores.order_status(b.order), 3);
  expect_seats(stores, b, "");
  EXPECT_EQ(text(get_order(engine, b.order), "status"), "REFUNDED");

  const auto again = call(engine, "POST", "/api/payments/" + b.payment + "/refund");
  EXPECT_EQ(again.status, 200) << again.body << again.error;
  EXPECT_EQ(text(json_of(again), "status"), "REFUNDED") << again.body;
  const auto close = call(engine, "POST", "/api/payments/" + b.payment + "/close");
  EXPECT_EQ(close.status, 409) << close.body;

  const auto late = callback(engine, stores, b.payment, "cb-late");
  EXPECT_EQ(late.status, 200) << late.body << late.error;
  EXPECT_EQ(late.body, "success");
  EXPECT_EQ(stores.payment_status(b.payment), 4);
  EXPECT_EQ(stores.order_status(b.order), 3);
  expect_seats(stores, b, "");
  EXPECT_EQ(stores.discrepancies(b.payment, "paid_after_refund"), 1);
  const auto listed = listed_discrepancies(engine, b.payment);
  ASSERT_EQ(listed.size(), 1U);
  EXPECT_EQ(text(listed[0], "kind"), "paid_after_refund");

  // The released seats go to another order; the gateway replaying its original success
  // (same callback id) is acknowledged and never takes them back.
  Booking next(stores, shows, "b");
  next.show = b.show;
  ASSERT_TRUE(book(engine, next, false));
  const auto replay = callback(engine, stores, b.payment, "cb-pay");
  EXPECT_EQ(replay.status, 200) << replay.body << replay.error;
  // (A duplicate may reach its log row only at the engine's next flush.)
  EXPECT_TRUE(wait_until(
      [&] { return stores.log_row(stores.id("cb-pay")).value_or(LogRow{}).duplicate_count == 1; },
      5s));
  expect_seats(stores, next, "1:" + next.order);
  EXPECT_EQ(stores.payment_status(b.payment), 4);
  EXPECT_EQ(stores.order_status(b.order), 3);
}

TEST(Refund, UnpaidOrUnknownPaymentIsRefused) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, b));

  const auto refund = call(engine, "POST", "/api/payments/" + b.payment + "/refund");
  EXPECT_EQ(refund.status, 409) << refund.body << refund.error;
  EXPECT_EQ(stores.payment_status(b.payment), 0);
  EXPECT_EQ(stores.order_status(b.order), 0);
  expect_seats(stores, b, "1:" + b.order);
  EXPECT_EQ(call(engine, "POST", "/api/payments/" + stores.id("no-such-pay") + "/refund").status,
            404);
}

// ---- discrepancies ------------------------------------------------------------------------

TEST(Discrepancies, ListFiltersLimitsAndResolves) {
  Stores stores;
  const auto first_payment = stores.id("pay-d1");
  const auto second_payment = stores.id("pay-d2");
  std::int64_t first = 0;
  std::int64_t second = 0;
  {
    pqxx::work tx(stores.pg());
    const char* insert =
        "INSERT INTO payment_discrepancy (payment_no, order_no, kind, detail) "
        "VALUES ($1, $2, $3, '{\"source\":\"test\"}') RETURNING id";
    first = tx.exec_params1(insert, first_payment, stores.id("ord-d1"), "paid_after_cancel")[0]
                .as<std::int64_t>();
    second = tx.exec_params1(insert, second_payment, stores.id("ord-d2"), "paid_after_refund")[0]
                 .as<std::int64_t>();
    tx.commit();
  }
  TestEngine engine(api_env());
  ASSERT_TRUE(engine.healthy());
  const auto ids_in = [](const Response& response) {
    std::set<std::int64_t> ids;
    for (const auto& row : json_of(response)) {
      ids.insert(row.value("id", std::int64_t{0}));
    }
    return ids;
  };

  const auto open = call(engine, "GET", "/api/discrepancies");
  ASSERT_EQ(open.status, 200) << open.body << open.error;
  EXPECT_TRUE(ids_in(open).contains(first));
  EXPECT_TRUE(ids_in(open).contains(second));
  const auto one = listed_discrepancies(engine, first_payment);
  ASSERT_EQ(one.size(), 1U);
  EXPECT_EQ(text(one[0], "kind"), "paid_after_cancel");
  EXPECT_EQ(text(one[0], "orderNo"), stores.id("ord-d1"));
  EXPECT_EQ(one[0].value("detail", json()), json({{"source", "test"}}));
  EXPECT_FALSE(text(one[0], "createdAt").empty());

  const auto resolved =
      call(engine, "POST", "/api/discrepancies/" + std::to_string(first) + "/resolve");
  EXPECT_EQ(resolved.status, 200) << resolved.body << resolved.error;
  EXPECT_EQ(json_of(resolved).value("resolved", false), true) << resolved.body;
  const auto after = call(engine, "GET", "/api/discrepancies");
  EXPECT_FALSE(ids_in(after).contains(first));
  EXPECT_TRUE(ids_in(after).contains(second));
  const auto all = listed_discrepancies(engine, first_payment, false);
  ASSERT_EQ(all.size(), 1U);
  EXPECT_FALSE(text(all[0], "resolvedAt").empty()) << all[0];

  const auto limited = call(engine, "GET", "/api/discrepancies?limit=1");
  EXPECT_EQ(limited.status, 200) << limited.body;
  EXPECT_EQ(json_of(limited).size(), 1U) << limited.body;
  const auto two = call(engine, "GET", "/api/discrepancies?open=false&limit=2");
  EXPECT_EQ(two.status, 200) << two.body;
  EXPECT_EQ(json_of(two).size(), 2U) << two.body;
  for (const char* bad : {"0", "501", "-1", "x", "1x"}) {
    const auto response = call(engine, "GET", std::string("/api/discrepancies?limit=") + bad);
    EXPECT_EQ(response.status, 400) << bad << " → " << response.body;
    EXPECT_EQ(text(json_of(response), "field"), "limit") << response.body;
  }

  const auto again =
      call(engine, "POST", "/api/discrepancies/" + std::to_string(first) + "/resolve");
  EXPECT_EQ(again.status, 200) << again.body << again.error;
  const auto unknown = call(engine, "POST", "/api/discrepancies/9223372036854775807/resolve");
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  for (const char* bad : {"abc", "0", "-3", "1.5"}) {
    const auto response =
        call(engine, "POST", std::string("/api/discrepancies/") + bad + "/resolve");
    EXPECT_EQ(response.status, 400) << bad << " → " << response.body;
    EXPECT_EQ(text(json_of(response), "field"), "id") << response.body;
  }
}

// ---- mock gateway -------------------------------------------------------------------------

TEST(MockGateway, AutomaticSuccessArrivesThroughTheNotifyPath) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env(
      {{"SEATFLOW_MOCK_GATEWAY_AUTO", std::nullopt}, {"SEATFLOW_MOCK_GATEWAY_DELAY_MS", "200"}}));
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, b));

  const bool paid =
      wait_until([&] { return text(get_payment(engine, b.payment), "status") == "SUCCESS"; }, 10s);
  ASSERT_TRUE(paid) << engine.log();
  const auto payment = get_payment(engine, b.payment);
  EXPECT_EQ(text(payment, "orderStatus"), "PAID");
  EXPECT_FALSE(text(payment, "paidAt").empty());
  EXPECT_EQ(text(get_order(engine, b.order), "status"), "PAID");
  expect_seats(stores, b, "2:" + b.order);
  const auto ids = callback_ids(stores, b.payment);
  ASSERT_EQ(ids.size(), 1U);
  EXPECT_TRUE(ids[0].starts_with("mock_")) << ids[0];
  // Counted as the engine answers the mock gateway, just after the commit seen above: a bounded
  // wait, not a race.
  EXPECT_TRUE(wait_until([&] { return engine.callbacks("applied") == 1.0; }, 5s))
      << engine.metrics();
}

TEST(MockGateway, PayOnDemandSendsFailureThenSuccessWithFreshCallbackIds) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env({{"SEATFLOW_MOCK_GATEWAY_DELAY_MS", "200"}}));
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, b));
  // SEATFLOW_MOCK_GATEWAY_AUTO=off: nothing arrives by itself.
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(stores.payment_status(b.payment), 0);
  EXPECT_TRUE(callback_ids(stores, b.payment).empty());

  const json fail = {{"paymentNo", b.payment}, {"success", false}};
  const auto failed = call(engine, "POST", "/api/mock-gateway/pay", fail);
  ASSERT_EQ(failed.status, 200) << failed.body << failed.error;
  const auto failed_body = json_of(failed);
  EXPECT_EQ(failed_body.value("notifyStatus", 0), 200) << failed.body;
  EXPECT_EQ(text(failed_body, "notifyBody"), "success") << failed.body;
  EXPECT_TRUE(text(failed_body, "callbackId").starts_with("mock_")) << failed.body;
  EXPECT_EQ(text(get_payment(engine, b.payment), "status"), "FAILED");
  EXPECT_EQ(stores.order_status(b.order), 0);

  const json succeed = {{"paymentNo", b.payment}, {"success", true}};
  const auto paid = call(engine, "POST", "/api/mock-gateway/pay", succeed);
  ASSERT_EQ(paid.status, 200) << paid.body << paid.error;
  const auto paid_body = json_of(paid);
  EXPECT_EQ(paid_body.value("notifyStatus", 0), 200) << paid.body;
  EXPECT_TRUE(text(paid_body, "callbackId").starts_with("mock_")) << paid.body;
  EXPECT_NE(text(paid_body, "callbackId"), text(failed_body, "callbackId"));
  const auto payment = get_payment(engine, b.payment);
  EXPECT_EQ(text(payment, "status"), "SUCCESS");
  EXPECT_FALSE(text(payment, "paidAt").empty()) << payment;
  EXPECT_EQ(text(payment, "orderStatus"), "PAID");
  expect_seats(stores, b, "2:" + b.order);
  const auto ids = callback_ids(stores, b.payment);
  EXPECT_EQ(ids.size(), 2U);
  EXPECT_EQ(
      std::set<std::string>(ids.begin(), ids.end()),
      (std::set<std::string>{text(failed_body, "callbackId"), text(paid_body, "callbackId")}));

  // An unknown payment: the mock delivers and reports the notify path's 404.
  const json unknown = {{"paymentNo", stores.id("no-such-pay")}, {"success", true}};
  const auto not_found = call(engine, "POST", "/api/mock-gateway/pay", unknown);
  EXPECT_EQ(not_found.status, 200) << not_found.body;
  EXPECT_EQ(json_of(not_found).value("notifyStatus", 0), 404) << not_found.body;
  for (const auto& bad :
       {json{{"paymentNo", b.payment}}, json{{"paymentNo", b.payment}, {"success", "yes"}}}) {
    const auto response = call(engine, "POST", "/api/mock-gateway/pay", bad);
    EXPECT_EQ(response.status, 400) << bad << " → " << response.body;
    EXPECT_EQ(text(json_of(response), "field"), "success") << response.body;
  }
}

TEST(MockGateway, AbsentInProd) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env({{"SEATFLOW_PROFILE", "prod"},
                             {"SEATFLOW_MOCK_GATEWAY_AUTO", std::nullopt},
                             {"SEATFLOW_MOCK_GATEWAY_DELAY_MS", "200"}}));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const json pay = {{"paymentNo", b.payment}, {"success", true}};
  const auto response = call(engine, "POST", "/api/mock-gateway/pay", pay);
  EXPECT_EQ(response.status, 404) << response.body << response.error;

  ASSERT_TRUE(book(engine, b));
  std::this_thread::sleep_for(700ms);
  EXPECT_EQ(text(get_payment(engine, b.payment), "status"), "PENDING");
  EXPECT_TRUE(callback_ids(stores, b.payment).empty());
  expect_seats(stores, b, "1:" + b.order);
}

TEST(MockGateway, OnInProdRefusesToStart) {
  auto env = engine_env(free_port());
  env["SEATFLOW_PROFILE"] = "prod";
  env["SEATFLOW_API_TOKEN"] = kToken;
  env["SEATFLOW_MOCK_GATEWAY"] = "on";
  const auto result = run_to_exit({"serve"}, env, 10s);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("SEATFLOW_MOCK_GATEWAY"), std::string::npos) << result.output;
}

TEST(ApiAuth, ProdRefusesTheDevToken) {
  auto env = engine_env(free_port());
  env["SEATFLOW_PROFILE"] = "prod";
  env["SEATFLOW_API_TOKEN"] = "seatflow-dev-only-api-token";
  const auto result = run_to_exit({"serve"}, env, 10s);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("SEATFLOW_API_TOKEN"), std::string::npos) << result.output;
}

// ---- order timeout sweeper ----------------------------------------------------------------

EnvOverrides sweeper_env() {
  return api_env({{"SEATFLOW_SWEEPER", "on"},
                  {"SEATFLOW_ORDER_TIMEOUT_MS", "1000"},
                  {"SEATFLOW_SWEEP_INTERVAL_MS", "100"}});
}

TEST(Sweeper, CancelsExpiredOrdersClosesTheirPaymentsAndFreesTheSeats) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking pending(stores, shows, "a");
  const Booking no_payment(stores, shows, "b");
  const Booking failed(stores, shows, "c");
  TestEngine engine(sweeper_env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, pending));
  ASSERT_TRUE(book(engine, no_payment, false));
  ASSERT_TRUE(book(engine, failed));
  ASSERT_EQ(callback(engine, stores, failed.payment, "cb-fail", 2).status, 200);
  ASSERT_EQ(stores.payment_status(failed.payment), 2);

  const bool cancelled = wait_until(
      [&] {
        return stores.order_status(pending.order) == 2 &&
               stores.order_status(no_payment.order) == 2 && stores.order_status(failed.order) == 2;
      },
      6s);
  ASSERT_TRUE(cancelled) << engine.log();
  EXPECT_EQ(stores.payment_status(pending.payment), 3);
  EXPECT_EQ(stores.payment_status(failed.payment), 3);
  for (const auto* b : {&pending, &no_payment, &failed}) {
    expect_seats(stores, *b, "");
  }
  const auto payment = get_payment(engine, pending.payment);
  EXPECT_EQ(text(payment, "status"), "CLOSED");
  EXPECT_EQ(text(payment, "orderStatus"), "CANCELLED");

  const auto late = callback(engine, stores, pending.payment, "cb-late");
  EXPECT_EQ(late.status, 200) << late.body << late.error;
  EXPECT_EQ(late.body, "success");
  EXPECT_EQ(stores.payment_status(pending.payment), 3);
  EXPECT_EQ(stores.order_status(pending.order), 2);
  expect_seats(stores, pending, "");
  EXPECT_EQ(stores.discrepancies(pending.payment, "paid_after_cancel"), 1);
  EXPECT_EQ(listed_discrepancies(engine, pending.payment).size(), 1U);
}

TEST(Sweeper, OrderPaidBeforeExpiryIsNotCancelled) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking paid(stores, shows, "a");
  const Booking canary(stores, shows, "b");
  TestEngine engine(sweeper_env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(book(engine, paid));
  const auto pay = callback(engine, stores, paid.payment, "cb-pay");
  ASSERT_EQ(pay.status, 200) << pay.body << pay.error;
  ASSERT_EQ(stores.order_status(paid.order), 1);
  // Created after the paid one: once the sweeper has cancelled it, it has seen the paid one
  // expired too.
  ASSERT_TRUE(book(engine, canary));
  ASSERT_TRUE(wait_until([&] { return stores.order_status(canary.order) == 2; }, 6s))
      << engine.log();
  std::this_thread::sleep_for(300ms);

  EXPECT_EQ(stores.order_status(paid.order), 1);
  EXPECT_EQ(stores.payment_status(paid.payment), 1);
  expect_seats(stores, paid, "2:" + paid.order);
  EXPECT_EQ(text(get_order(engine, paid.order), "status"), "PAID");
}

// ---- API overload -------------------------------------------------------------------------

// One API actor stalled in Redis (failpoint delay), SEATFLOW_INFLIGHT_API_REQUESTS_MAX=1: the limit
// counts requests waiting for an API actor (the running one no longer counts), so the second
// request queues and the third is refused with 503 + Retry-After; nothing waits without bound.
TEST(ApiLimits, QueuedRequestsBeyondTheLimitAre503) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env({{"SEATFLOW_API_POOL_SIZE", "1"},
                             {"SEATFLOW_INFLIGHT_API_REQUESTS_MAX", "1"},
                             {"SEATFLOW_FAILPOINTS", "redis=delay:1500ms"}}));
  ASSERT_TRUE(engine.healthy());
  const auto raw = [](std::string_view method, const std::string& target, const std::string& body) {
    std::string request(method);
    request += " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ";
    request += kToken;
    request += "\r\nContent-Type: application/json\r\nContent-Length: ";
    request += std::to_string(body.size()) + "\r\n\r\n" + body;
    return request;
  };
  auto slow = engine.connect(10'000);
  ASSERT_TRUE(slow->send_raw(raw("POST", "/api/orders", order_request(b).dump())));
  std::this_thread::sleep_for(300ms);  // the API actor has taken it and sleeps in Redis
  auto queued = engine.connect(10'000);
  ASSERT_TRUE(queued->send_raw(raw("GET", "/api/orders/" + b.order, "")));
  std::this_thread::sleep_for(200ms);

  const auto refused = call(engine, "GET", "/api/orders/" + b.order);
  EXPECT_EQ(refused.status, 503) << refused.body << refused.error;
  EXPECT_EQ(refused.header("retry-after"), "1");

  const auto created = slow->read_response();
  EXPECT_EQ(created.status, 201) << created.body << created.error;
  const auto after = queued->read_response();
  // Queued, it runs after the create (200); a limit that also counted running jobs would refuse it.
  EXPECT_TRUE(after.status == 200 || after.status == 503)
      << after.status << after.body << after.error;
}

// ---- store failures -----------------------------------------------------------------------

TEST(ApiFailures, SeatStoreDownIs503AndLeavesNoOrder) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env({{"SEATFLOW_FAILPOINTS", "redis=error"}}));
  ASSERT_TRUE(engine.healthy());
  const auto response = call(engine, "POST", "/api/orders", order_request(b));
  EXPECT_EQ(response.status, 503) << response.body << response.error;
  EXPECT_EQ(response.header("retry-after"), "1");
  EXPECT_FALSE(text(json_of(response), "error").empty()) << response.body;
  EXPECT_EQ(order_rows(stores, b.order), 0);
  expect_seats(stores, b, "");
}

TEST(ApiFailures, DatabaseDownIs503AndLocksNoSeat) {
  Stores stores;
  ShowKeys shows(stores);
  const Booking b(stores, shows, "a");
  TestEngine engine(api_env({{"SEATFLOW_FAILPOINTS", "pg_connect=error"}}));
  ASSERT_TRUE(engine.healthy());
  const auto created = call(engine, "POST", "/api/orders", order_request(b));
  EXPECT_EQ(created.status, 503) << created.body << created.error;
  EXPECT_EQ(created.header("retry-after"), "1");
  expect_seats(stores, b, "");
  const auto fetched = call(engine, "GET", "/api/orders/" + b.order);
  EXPECT_EQ(fetched.status, 503) << fetched.body << fetched.error;
}

// ---- races --------------------------------------------------------------------------------

// Runs each job on its own thread, all at once, and waits for them.
void run_together(const std::vector<std::function<void()>>& jobs) {
  std::vector<std::thread> threads;
  threads.reserve(jobs.size());
  for (const auto& job : jobs) {
    threads.emplace_back(job);
  }
  for (auto& thread : threads) {
    thread.join();
  }
}

TEST(Races, ConcurrentOrdersForOneSeatExactlyOneWins) {
  Stores stores;
  ShowKeys shows(stores);
  TestEngine engine(api_env({{"SEATFLOW_API_POOL_SIZE", "4"}}));
  ASSERT_TRUE(engine.healthy());
  constexpr int kRounds = 10;
  constexpr int kContenders = 4;
  for (int round = 0; round < kRounds; ++round) {
    const auto show = shows.add(stores.id("show-" + std::to_string(round)));
    std::vector<Booking> bookings;
    for (int i = 0; i < kContenders; ++i) {
      Booking b(stores, shows, std::to_string(round) + "-" + std::to_string(i));
      b.show = show;
      b.seats = {"X" + std::to_string(i), "Z"};  // Z is contested, X<i> is only theirs
      bookings.push_back(b);
    }
    std::vector<Response> answers(kContenders);
    std::vector<std::function<void()>> jobs;
    for (int i = 0; i < kContenders; ++i) {
      jobs.emplace_back(
          [&, i] { answers[i] = call(engine, "POST", "/api/orders", order_request(bookings[i])); });
    }
    run_together(jobs);
    int winners = 0;
    for (int i = 0; i < kContenders; ++i) {
      const auto& b = bookings[i];
      if (answers[i].status == 201) {
        ++winners;
        expect_seats(stores, b, "1:" + b.order);
        EXPECT_EQ(order_rows(stores, b.order), 1);
      } else {
        EXPECT_EQ(answers[i].status, 409) << answers[i].body << answers[i].error;
        EXPECT_EQ(text(json_of(answers[i]), "seatId"), "Z") << answers[i].body;
        EXPECT_EQ(stores.seat(show, b.seats[0]), "") << b.seats[0];
        EXPECT_EQ(order_rows(stores, b.order), 0);
      }
    }
    EXPECT_EQ(winners, 1) << "round " << round;
  }
}

// Regression test (fixed in persistence/stores/order_store.cpp): two or more POST
// /api/payments for the same order at once (different paymentNo each): exactly one gets 201, but
// the losers get 409 {"error":"paymentNo already exists","paymentNo":
// "<their own requested paymentNo>"}, a payment that does not exist, instead of the order's
// existing payment (as a sequential second create answers). The loser's lookup of the order's
// payment runs before the winner commits; its INSERT ... ON CONFLICT DO NOTHING then hits
// UNIQUE(order_no) and is reported as a paymentNo clash.
TEST(Races, ConcurrentPaymentCreatesForOneOrderNameTheExistingPayment) {
  Stores stores;
  ShowKeys shows(stores);
  TestEngine engine(api_env({{"SEATFLOW_API_POOL_SIZE", "4"}}));
  ASSERT_TRUE(engine.healthy());
  constexpr int kRounds = 10;
  constexpr int kContenders = 3;
  std::vector<std::string> wrong;  // 409 answers that do not name the existing payment
  for (int round = 0; round < kRounds; ++round) {
    const Booking b(stores, shows, std::to_string(round));
    ASSERT_TRUE(book(engine, b, false));
    std::vector<Response> answers(kContenders);
    std::vector<std::function<void()>> jobs;
    for (int i = 0; i < kContenders; ++i) {
      jobs.emplace_back([&, i] {
        auto request = payment_request(b);
        request["paymentNo"] = b.payment + "-" + std::to_string(i);
        answers[i] = call(engine, "POST", "/api/payments", request);
      });
    }
    run_together(jobs);
    std::string winner;
    int winners = 0;
    for (const auto& answer : answers) {
      if (answer.status == 201) {
        ++winners;
        winner = text(json_of(answer), "paymentNo");
      }
    }
    ASSERT_EQ(winners, 1) << "round " << round;
    for (const auto& answer : answers) {
      if (answer.status != 201) {
        EXPECT_EQ(answer.status, 409) << answer.body << answer.error;
        if (text(json_of(answer), "paymentNo") != winner) {
          wrong.push_back(answer.body + " (existing: " + winner + ")");
        }
      }
    }
    EXPECT_EQ(text(get_order(engine, b.order), "paymentNo"), winner);
  }
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " of " << kRounds * (kContenders - 1)
                             << " losing creates named the wrong payment, e.g. " << wrong.front();
}

// SPEC §7: close races with the callback; exactly one wins, and the loser's close is 409.
TEST(Races, CloseRacingASuccessCallbackExactlyOneWins) {
  Stores stores;
  ShowKeys shows(stores);
  TestEngine engine(api_env({{"SEATFLOW_API_POOL_SIZE", "4"}}));
  ASSERT_TRUE(engine.healthy());
  constexpr int kRounds = 12;
  for (int round = 0; round < kRounds; ++round) {
    const Booking b(stores, shows, std::to_string(round));
    ASSERT_TRUE(book(engine, b));
    Response close;
    Response paid;
    run_together(
        {[&] { close = call(engine, "POST", "/api/payments/" + b.payment + "/close"); },
         [&] { paid = callback(engine, stores, b.payment, "cb-" + std::to_string(round)); }});
    EXPECT_EQ(paid.status, 200) << paid.body << paid.error;
    if (close.status == 200) {
      EXPECT_EQ(stores.payment_status(b.payment), 3);
      EXPECT_EQ(stores.order_status(b.order), 2);
      EXPECT_EQ(stores.discrepancies(b.payment, "paid_after_cancel"), 1);
      expect_seats(stores, b, "");
    } else {
      EXPECT_EQ(close.status, 409) << close.body << close.error;
      EXPECT_EQ(stores.payment_status(b.payment), 1);
      EXPECT_EQ(stores.order_status(b.order), 1);
      EXPECT_EQ(stores.discrepancies(b.payment, "paid_after_cancel"), 0);
      expect_seats(stores, b, "2:" + b.order);
    }
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

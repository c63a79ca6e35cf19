// The API's route table: its pattern matching and the table's own invariants.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "dev/mock_gateway.hpp"
#include "http/api_request.hpp"
#include "http/api_routes.hpp"

namespace seatflow::http {
namespace {
namespace SEATFLOW_UNITY_ID {

TEST(ApiRoutesTest, PatternsMatchWholeSegments) {
  std::vector<std::string> args;
  EXPECT_TRUE(match_pattern("/api/orders", "/api/orders", args));
  EXPECT_TRUE(args.empty());
  EXPECT_FALSE(match_pattern("/api/orders", "/api/orders/", args));
  EXPECT_FALSE(match_pattern("/api/orders", "/api/ordersx", args));
  EXPECT_TRUE(match_pattern("/api/payments/{paymentNo}/sync", "/api/payments/p1/sync", args));
  EXPECT_EQ(args, std::vector<std::string>{"p1"});
  EXPECT_FALSE(match_pattern("/api/payments/{paymentNo}", "/api/payments/p1/sync", args));
  EXPECT_FALSE(match_pattern("/api/payments/{paymentNo}/sync", "/api/payments/p1", args));
}

TEST(ApiRoutesTest, ParametersArePercentDecodedAndNeverEmpty) {
  std::vector<std::string> args;
  EXPECT_TRUE(match_pattern("/api/callbacks/{id}", "/api/callbacks/a%2Fb%20c", args));
  EXPECT_EQ(args, std::vector<std::string>{"a/b c"});
  EXPECT_TRUE(match_pattern("/api/callbacks/{id}", "/api/callbacks/a+b", args));
  EXPECT_EQ(args, std::vector<std::string>{"a+b"});  // '+' is a space only in a query
  EXPECT_FALSE(match_pattern("/api/callbacks/{id}", "/api/callbacks/", args));
  EXPECT_FALSE(match_pattern("/api/callbacks/{id}", "/api/callbacks/%ZZ", args));
  EXPECT_FALSE(match_pattern("/api/callbacks/{id}", "/api/callbacks/%4", args));
}

TEST(ApiRoutesTest, EveryRouteIsOnceInTheTable) {
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (const auto& route : OrdersApi::route_table()) {
    EXPECT_TRUE(route.method == "GET" || route.method == "POST") << route.pattern;
    EXPECT_TRUE(route.pattern.starts_with("/api/")) << route.pattern;
    EXPECT_TRUE(route.handler != nullptr) << route.pattern;
    EXPECT_TRUE(seen.emplace(route.method, route.pattern).second) << route.pattern;
  }
  // The dev mock gateway's route, registered at wiring time, is none of the table's.
  EXPECT_TRUE(seen.emplace("POST", dev::kMockPayPath).second);
  EXPECT_EQ(seen.size(), 19u);  // the four bill-run routes (SPEC §13) included
}

TEST(ApiRequestTest, BadBodiesAreReturnedNotThrown) {
  HttpRequest request;
  request.body = "[1]";
  const auto body = parse_body(request);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.detail(), "body must be a JSON object");
  const auto field = id_field(nlohmann::json{{"orderNo", "a b"}}, "orderNo", true);
  ASSERT_FALSE(field.ok());
  EXPECT_EQ(field.named().value, "orderNo");
  EXPECT_EQ(field.detail(), "orderNo must be 1-128 characters of [A-Za-z0-9_.:-]");
  const auto missing = id_field(nlohmann::json::object(), "orderNo", false);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing.value(), "");
  const auto id = discrepancy_id("0");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(discrepancy_id("12").value(), 12);
}

TEST(ApiRequestTest, ARefusalIsAnsweredThroughTheStatusTableNamingItsField) {
  const auto field = id_field(nlohmann::json{{"orderNo", 7}}, "orderNo", true);
  ASSERT_FALSE(field.ok());
  EXPECT_EQ(field.error(), errc::bad_request);
  const auto named = json_error(field.failure());
  EXPECT_EQ(named.status, 400);
  EXPECT_EQ(nlohmann::json::parse(named.body),
            (nlohmann::json{{"error", field.detail()}, {"field", "orderNo"}}));
  HttpRequest request;
  request.body = "{";
  const auto body = parse_body(request);
  ASSERT_FALSE(body.ok());
  const auto unnamed = json_error(body.failure());
  EXPECT_EQ(unnamed.status, 400);
  EXPECT_EQ(nlohmann::json::parse(unnamed.body),
            (nlohmann::json{{"error", "body must be a JSON object"}}));
}

TEST(ApiRequestTest, QueryParametersAreKnownOnceAndDecoded) {
  static constexpr std::string_view kKnown[] = {"a", "b"};
  const auto ok = parse_query("a=x%20y&b=1+2", kKnown);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().at("a"), "x y");
  EXPECT_EQ(ok.value().at("b"), "1 2");
  EXPECT_EQ(parse_query("c=1", kKnown).named().value, "c");
  EXPECT_EQ(parse_query("a=1&a=2", kKnown).detail(), "a is given more than once");
  EXPECT_EQ(parse_query("a=%G1", kKnown).detail(), "a has a broken percent-escape");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::http

// parse_url of the outbound client: schemes, ports, IPv6, targets, and what it refuses.
#include <gtest/gtest.h>

#include "net/http_client.hpp"

namespace seatflow::net {
namespace {
namespace SEATFLOW_UNITY_ID {

TEST(ParseUrl, SchemesPortsAndTargets) {
  std::string why;
  const auto a = parse_url("https://openapi.alipay.com/gateway.do", &why);
  ASSERT_TRUE(a) << why;
  EXPECT_TRUE(a->tls);
  EXPECT_EQ(a->host, "openapi.alipay.com");
  EXPECT_EQ(a->port, 443);
  EXPECT_EQ(a->target, "/gateway.do");
  const auto b = parse_url("http://127.0.0.1:8080", &why);
  ASSERT_TRUE(b) << why;
  EXPECT_FALSE(b->tls);
  EXPECT_EQ(b->port, 8080);
  EXPECT_EQ(b->target, "/");
  const auto c = parse_url("https://[::1]:9443/v3/pay?mchid=1", &why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->port, 9443);
  EXPECT_EQ(c->target, "/v3/pay?mchid=1");
}

TEST(BasePath, DropsTrailingSlashesSoAPathCanBeAppended) {
  EXPECT_EQ(base_path("/"), "");
  EXPECT_EQ(base_path("/gw//"), "/gw");
  EXPECT_EQ(base_path("/gw"), "/gw");
  EXPECT_EQ(base_path(""), "");
}

TEST(ParseUrl, RefusesWhatIsNotAnAbsoluteHttpUrl) {
  std::string why;
  for (const auto* bad :
       {"ftp://x/", "127.0.0.1:80", "http://", "http://:80/", "http://h:0/", "http://h:65536/",
        "http://h:8x/", "http://user:pw@h/", "https://[::1/"}) {
    EXPECT_FALSE(parse_url(bad, &why).has_value()) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::net

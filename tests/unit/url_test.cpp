// parse_url of the outbound client: schemes, ports, IPv6, targets, and what it refuses.
#include <gtest/gtest.h>

#include "net/http_client.hpp"

namespace seatflow::net {
namespace {
namespace SEATFLOW_UNITY_ID {

TEST(ParseUrl, SchemesPortsAndTargets) {
  const auto a = parse_url("https://openapi.alipay.com/gateway.do");
  ASSERT_TRUE(a.ok()) << a.detail();
  EXPECT_TRUE(a.value().tls);
  EXPECT_EQ(a.value().host, "openapi.alipay.com");
  EXPECT_EQ(a.value().port, 443);
  EXPECT_EQ(a.value().target, "/gateway.do");
  const auto b = parse_url("http://127.0.0.1:8080");
  ASSERT_TRUE(b.ok()) << b.detail();
  EXPECT_FALSE(b.value().tls);
  EXPECT_EQ(b.value().port, 8080);
  EXPECT_EQ(b.value().target, "/");
  const auto c = parse_url("https://[::1]:9443/v3/pay?mchid=1");
  ASSERT_TRUE(c.ok()) << c.detail();
  EXPECT_EQ(c.value().host, "::1");
  EXPECT_EQ(c.value().port, 9443);
  EXPECT_EQ(c.value().target, "/v3/pay?mchid=1");
}

TEST(BasePath, DropsTrailingSlashesSoAPathCanBeAppended) {
  EXPECT_EQ(base_path("/"), "");
  EXPECT_EQ(base_path("/gw//"), "/gw");
  EXPECT_EQ(base_path("/gw"), "/gw");
  EXPECT_EQ(base_path(""), "");
}

TEST(ParseUrl, RefusesWhatIsNotAnAbsoluteHttpUrl) {
  for (const auto* bad :
       {"ftp://x/", "127.0.0.1:80", "http://", "http://:80/", "http://h:0/", "http://h:65536/",
        "http://h:8x/", "http://user:pw@h/", "https://[::1/"}) {
    const auto refused = parse_url(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error(), errc::bad_url) << bad;
    EXPECT_FALSE(refused.detail().empty()) << bad;
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::net

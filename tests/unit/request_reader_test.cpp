// How a parsed request becomes the handler's HttpRequest (wire::to_request, wire::framing_refusal):
// a field sent on several lines is read as one list in the order the lines came (RFC 9110 §5.3),
// and a target in absolute form is routed by its path with its authority as the Host (RFC 9112
// §3.2.2). Each request goes through the server's own Beast parser set-up.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "http/request_reader.hpp"
#include "http/source.hpp"

namespace seatflow::http::wire {
namespace {
namespace SEATFLOW_UNITY_ID {

// Parses `bytes` (one whole request) as the server does; fails the test when it does not parse.
RequestMessage parse(std::string_view bytes) {
  RequestParser parser;
  apply_limits(parser, HttpConfig{});
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(parser.is_done());
  return parser.release();
}

TEST(RequestReaderTest, RepeatedFieldLinesAreOneListInTheirOrder) {
  auto request = to_request(
      parse("POST /api/payment/notify/hmac HTTP/1.1\r\nHost: h\r\n"
            "X-Forwarded-For: 198.51.100.9\r\nContent-Length: 0\r\nX-Forwarded-For: 203.0.113.4\r\n"
            "x-forwarded-for: 192.0.2.10, 192.0.2.11\r\n\r\n"));
  EXPECT_EQ(request.headers.at("x-forwarded-for"),
            "198.51.100.9, 203.0.113.4, 192.0.2.10, 192.0.2.11");
  EXPECT_EQ(request.headers.at("content-length"), "0");
}

TEST(RequestReaderTest, AProxysAppendedLineDecidesTheSourceNotTheClientsOwn) {
  // The client wrote its own X-Forwarded-For; the trusted proxy (the peer) appended a line with
  // the address it saw. The source is that address, not the one the client wrote.
  auto request =
      to_request(parse("GET /healthz HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 192.0.2.1\r\n"
                       "X-Forwarded-For: 203.0.113.50\r\n\r\n"));
  const auto proxies = parse_cidr_list("10.0.0.0/8");
  ASSERT_TRUE(proxies.ok());
  const auto source = resolve_source(*parse_address("10.1.2.3"),
                                     request.headers.at("x-forwarded-for"), proxies.value());
  EXPECT_EQ(to_string(source), "203.0.113.50");
}

TEST(RequestReaderTest, AnAbsoluteFormTargetIsRoutedByItsPathWithItsAuthorityAsHost) {
  auto request =
      to_request(parse("GET http://engine.example:8080/healthz HTTP/1.1\r\nHost: other\r\n\r\n"));
  EXPECT_EQ(request.target, "/healthz");
  EXPECT_EQ(request.headers.at("host"), "engine.example:8080");

  auto with_query =
      to_request(parse("GET HTTPS://e/api/bill-runs?channel=hmac HTTP/1.1\r\nHost: e\r\n\r\n"));
  EXPECT_EQ(with_query.target, "/api/bill-runs?channel=hmac");
  EXPECT_EQ(to_request(parse("GET http://e HTTP/1.1\r\nHost: e\r\n\r\n")).target, "/");
  EXPECT_EQ(to_request(parse("GET http://e?x=1 HTTP/1.1\r\nHost: e\r\n\r\n")).target, "/?x=1");
  // The origin form, and a path that merely contains "://", are left as they are.
  EXPECT_EQ(to_request(parse("GET /a://b HTTP/1.1\r\nHost: e\r\n\r\n")).target, "/a://b");
  EXPECT_EQ(to_request(parse("GET ftp://e/x HTTP/1.1\r\nHost: e\r\n\r\n")).target, "ftp://e/x");
}

TEST(RequestReaderTest, AnAbsoluteFormTargetWithAnEmptyOrInvalidAuthorityIsRefused) {
  EXPECT_FALSE(framing_refusal(parse("GET http://e:1/healthz HTTP/1.1\r\nHost: e\r\n\r\n")));
  for (const std::string_view target : {"http:///healthz", "http://user@e/healthz"}) {
    const auto refusal =
        framing_refusal(parse("GET " + std::string(target) + " HTTP/1.1\r\nHost: e\r\n\r\n"));
    ASSERT_TRUE(refusal) << target;
    EXPECT_EQ(refusal->status, 400) << target;
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::http::wire

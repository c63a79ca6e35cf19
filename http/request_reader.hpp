// How the server turns bytes into an HttpRequest: the Beast parser with the configured limits, the
// answer to each read error, and the conversion of a parsed message. Header-only so that the HTTP
// fuzz target runs exactly the server's code on a flat buffer (Beast stays out of other TUs).
#pragma once

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http.hpp>

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "app/config.hpp"
#include "http/types.hpp"

namespace seatflow::http::wire {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;
using RequestMessage = boost::beast::http::request<boost::beast::http::string_body>;

// Applies SEATFLOW_HTTP_BODY_LIMIT_BYTES and SEATFLOW_HTTP_HEADER_LIMIT_BYTES to a fresh parser.
inline void apply_limits(RequestParser& parser, const app::HttpConfig& config) {
  parser.body_limit(config.body_limit_bytes);
  parser.header_limit(static_cast<std::uint32_t>(config.header_limit_bytes));
}

// True when a read ended because the peer left or was too slow: the connection just closes.
inline bool is_disconnect(const boost::beast::error_code& ec) {
  namespace net = boost::asio;
  return ec == boost::beast::http::error::end_of_stream || ec == boost::beast::error::timeout ||
         ec == net::error::operation_aborted || ec == net::error::eof ||
         ec == net::error::connection_reset;
}

// The answer (sent before closing) to a request that failed to parse: 413, 431 or 400.
inline HttpResponse parse_failure_response(const boost::beast::error_code& ec) {
  if (ec == boost::beast::http::error::body_limit) {
    return {413, "text/plain", "body exceeds the limit", {}};
  }
  if (ec == boost::beast::http::error::header_limit) {
    return {431, "text/plain", "headers exceed the limit", {}};
  }
  return {400, "text/plain", "malformed HTTP request", {}};
}

inline std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The handler's view of a parsed message: method as sent, header names lower-cased.
inline HttpRequest to_request(RequestMessage&& message) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  request.body = std::move(message.body());
  for (const auto& field : message) {
    request.headers.emplace(lower(field.name_string()), std::string(field.value()));
  }
  return request;
}

}  // namespace seatflow::http::wire

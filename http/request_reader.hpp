// How the server turns bytes into an HttpRequest: the Beast parser with the configured limits, the
// answer to each read error, and the conversion of a parsed message. Header-only so that the HTTP
// fuzz target runs exactly the server's code on a flat buffer (Beast stays out of other TUs).
#pragma once

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http.hpp>

#include <cctype>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "http/config.hpp"
#include "http/types.hpp"

namespace seatflow::http::wire {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;
using RequestMessage = boost::beast::http::request<boost::beast::http::string_body>;

// Applies SEATFLOW_HTTP_BODY_LIMIT_BYTES and SEATFLOW_HTTP_HEADER_LIMIT_BYTES to a fresh parser.
inline void apply_limits(RequestParser& parser, const HttpConfig& config) {
  parser.body_limit(config.body_bytes_max);
  parser.header_limit(static_cast<std::uint32_t>(config.header_bytes_max));
}

// The bytes a session may hold unparsed: one request's headers and body plus one first read (the
// parser consumes what it has parsed). Past it a read fails with buffer_overflow (413).
inline std::size_t session_buffer_bytes_max(const HttpConfig& config) {
  constexpr std::size_t kReadChunkBytes = 4096;
  return config.header_bytes_max + config.body_bytes_max + kReadChunkBytes;
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
  if (ec == boost::beast::http::error::body_limit ||
      ec == boost::beast::http::error::buffer_overflow) {
    return {413, "text/plain", "body exceeds the limit", {}};
  }
  if (ec == boost::beast::http::error::header_limit) {
    return {431, "text/plain", "headers exceed the limit", {}};
  }
  return {400, "text/plain", "malformed HTTP request", {}};
}

// Finds obs-fold (a header line that begins with a space or a tab, continuing the previous one) in
// a request's header section as its bytes arrive. RFC 9112 §5.2 lets a server reject it, and it
// must be rejected here: Beast 1.74's parser joins a folded line into the previous value without a
// trace, so a folded Transfer-Encoding would be read differently by a proxy in front. The same
// check refuses whitespace between the request line and the first header (RFC 9112 §2.2).
class HeaderScan {
 public:
  enum class State : std::uint8_t { reading, complete, folded };

  // Scans `bytes`, the request's unconsumed bytes, past those scanned before; stops at the empty
  // line that ends the header section. Call consumed() when the parser takes bytes off the front.
  State scan(std::string_view bytes) {
    if (line_start_ && !bytes.empty()) {
      line_start_ = false;
      judge_line_start(bytes.front());
    }
    while (state_ == State::reading) {
      const auto newline = bytes.find('\n', next_);
      if (newline == std::string_view::npos) {
        next_ = bytes.size();
        break;
      }
      if (newline + 1 == bytes.size()) {
        next_ = newline;  // the byte that says what follows has not arrived
        break;
      }
      judge_line_start(bytes[newline + 1]);
      next_ = newline + 1;
    }
    return state_;
  }

  // The parser took `count` bytes off the front (the request line, which ends with a newline).
  void consumed(std::size_t count) {
    if (next_ >= count) {
      next_ -= count;
      return;
    }
    line_start_ = true;  // the next byte begins a line
    next_ = 0;
  }

 private:
  void judge_line_start(char first) {
    if (first == ' ' || first == '\t') {
      state_ = State::folded;
    } else if (first == '\r' || first == '\n') {
      state_ = State::complete;  // the empty line: the header section has ended
    }
  }

  State state_ = State::reading;
  std::size_t next_ = 0;  // where the search for the next newline resumes
  bool line_start_ = false;
};

inline std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// A request target in absolute form (RFC 9112 §3.2.2: "http://host:port/path?query"), split
// into its authority and its origin form ("/path?query"; "/" when the path is empty).
struct AbsoluteTarget {
  std::string_view authority;
  std::string origin_form;
};

// The target's authority and origin form when it is in absolute form (scheme http or https, any
// case); nullopt for every other form (origin form, "*", authority form).
inline std::optional<AbsoluteTarget> absolute_target(std::string_view target) {
  const auto colon = target.find("://");
  if (colon == std::string_view::npos) {
    return std::nullopt;
  }
  const auto scheme = lower(target.substr(0, colon));
  if (scheme != "http" && scheme != "https") {
    return std::nullopt;
  }
  const auto rest = target.substr(colon + 3);
  const auto end = rest.find_first_of("/?#");
  AbsoluteTarget absolute{rest.substr(0, end), {}};
  const auto tail = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  absolute.origin_form = tail.starts_with('/') ? std::string(tail) : "/" + std::string(tail);
  return absolute;
}

// Whether a header must appear at most once: the credential and signature headers (a second
// copy would leave it to chance which one is verified).
inline bool is_single_header(std::string_view lower_name) {
  return lower_name == "host" || lower_name == "authorization" ||
         lower_name == "stripe-signature" || lower_name.starts_with("wechatpay-") ||
         lower_name.starts_with("webhook-");
}

// Whether a Host value can be uri-host [":" port] (RFC 9110 §7.2): no whitespace, control, '@' or
// path, query and fragment delimiters. An empty value is allowed (a target without authority).
inline bool is_valid_host(std::string_view host) {
  for (const char c : host) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f || c == '/' || c == '?' || c == '#' || c == '@' || c == '\\') {
      return false;
    }
  }
  return true;
}

// The 400 (sent before closing) for a parsed request whose framing or headers cannot be trusted:
// no Host or an invalid one (RFC 9112 §3.2; HTTP/1.0 included: every client of the engine sends
// it), any Transfer-Encoding in HTTP/1.0, a Transfer-Encoding whose last coding is not chunked (the
// body's end would be unknown: request smuggling), a repeated Host, credential or signature
// header, or a target in absolute form whose authority is empty or invalid.
inline std::optional<HttpResponse> framing_refusal(const RequestMessage& message) {
  namespace bhttp = boost::beast::http;
  const auto host = message.find(bhttp::field::host);
  if (host == message.end()) {
    return HttpResponse{400, "text/plain", "missing Host header", {}};
  }
  if (!is_valid_host(host->value())) {
    return HttpResponse{400, "text/plain", "invalid Host header", {}};
  }
  if (const auto absolute = absolute_target(message.target());
      absolute && (absolute->authority.empty() || !is_valid_host(absolute->authority))) {
    return HttpResponse{400, "text/plain", "invalid authority in the request target", {}};
  }
  const auto te = message.find(bhttp::field::transfer_encoding);
  if (te != message.end()) {
    if (message.version() < 11) {
      return HttpResponse{400, "text/plain", "Transfer-Encoding in HTTP/1.0", {}};
    }
    // Beast has parsed the list already; only the last coding decides the framing.
    std::string_view codings = te->value();
    while (!codings.empty() && (codings.back() == ' ' || codings.back() == '\t')) {
      codings.remove_suffix(1);
    }
    const auto comma = codings.rfind(',');
    auto last = comma == std::string_view::npos ? codings : codings.substr(comma + 1);
    while (!last.empty() && (last.front() == ' ' || last.front() == '\t')) {
      last.remove_prefix(1);
    }
    if (lower(last) != "chunked" || message.count(bhttp::field::transfer_encoding) > 1) {
      return HttpResponse{400, "text/plain", "Transfer-Encoding must end with chunked", {}};
    }
  }
  for (auto it = message.begin(); it != message.end(); ++it) {
    const auto name = lower(it->name_string());
    if (!is_single_header(name)) {
      continue;
    }
    for (auto other = std::next(it); other != message.end(); ++other) {
      if (lower(other->name_string()) == name) {
        return HttpResponse{400, "text/plain", "repeated " + name + " header", {}};
      }
    }
  }
  return std::nullopt;
}

// The handler's view of a parsed message: method as sent (HEAD as GET), header names lower-cased.
// A field sent on several lines is one field whose value is the lines' values joined by ", " in
// the order they came (RFC 9110 §5.3), so a proxy's appended X-Forwarded-For line is read after a
// client's own. A target in absolute form is routed by its path, and its authority is the Host
// (RFC 9112 §3.2.2).
inline HttpRequest to_request(RequestMessage&& message) {
  HttpRequest request;
  // HEAD is answered as GET without the body (the server drops it): every GET route has HEAD.
  request.method = message.method() == boost::beast::http::verb::head
                       ? std::string("GET")
                       : std::string(message.method_string());
  request.target = std::string(message.target());
  request.body = std::move(message.body());
  for (const auto& field : message) {
    auto [it, inserted] =
        request.headers.try_emplace(lower(field.name_string()), std::string(field.value()));
    if (!inserted) {
      it->second.append(", ").append(field.value());
    }
  }
  if (auto absolute = absolute_target(request.target)) {
    request.headers.insert_or_assign("host", std::string(absolute->authority));
    request.target = std::move(absolute->origin_form);
  }
  return request;
}

}  // namespace seatflow::http::wire

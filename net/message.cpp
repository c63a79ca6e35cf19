// Absolute http(s) URLs and the message values shared by the gateway dialects and the client.
#include "net/message.hpp"

namespace seatflow::net {

std::string base_path(std::string target) {
  while (!target.empty() && target.back() == '/') {
    target.pop_back();
  }
  return target;
}

Result<Url> parse_url(std::string_view text) {
  Url url;
  if (text.starts_with("https://")) {
    url.tls = true;
    text.remove_prefix(8);
  } else if (text.starts_with("http://")) {
    text.remove_prefix(7);
  } else {
    return failed(errc::bad_url, "the URL must start with http:// or https://");
  }
  const auto slash = text.find('/');
  auto authority = text.substr(0, slash);
  url.target = slash == std::string_view::npos ? "/" : std::string(text.substr(slash));
  if (authority.find('@') != std::string_view::npos) {
    return failed(errc::bad_url, "credentials in the URL are not accepted");
  }
  std::string_view port_text;
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      return failed(errc::bad_url, "unterminated IPv6 address");
    }
    url.host = std::string(authority.substr(1, close - 1));
    const auto rest = authority.substr(close + 1);
    if (rest.starts_with(':')) {
      port_text = rest.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
    }
  }
  if (url.host.empty()) {
    return failed(errc::bad_url, "the URL has no host");
  }
  url.port = url.tls ? 443 : 80;
  if (!port_text.empty()) {
    unsigned value = 0;
    for (const char c : port_text) {
      if (c < '0' || c > '9' || value > 65535) {
        return failed(errc::bad_url, "bad port");
      }
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value == 0 || value > 65535) {
      return failed(errc::bad_url, "bad port");
    }
    url.port = static_cast<std::uint16_t>(value);
  }
  return url;
}

const std::string* Response::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) {
      return &value;
    }
  }
  return nullptr;
}

}  // namespace seatflow::net

// Absolute http(s) URLs and the request/response values: what the gateway dialects (channels/)
// and the outbound client (net/http_client) share. Plain data, no I/O, so the channel layer and
// the fuzz build need only this.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/errc.hpp"

namespace seatflow::net {

// http://host[:port]/path or https://…; the target keeps path and query.
struct Url {
  bool tls = false;
  std::string host;
  std::uint16_t port = 0;
  std::string target = "/";
};

// A base URL's path without its trailing slashes ("/" → ""), so that a path can be appended.
[[nodiscard]] std::string base_path(std::string target);

// The URL, or errc::bad_url (the detail says why) for anything but an absolute http(s) URL with a
// host.
[[nodiscard]] Result<Url> parse_url(std::string_view text);

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method = "GET";
  Url url;
  HeaderList headers;  // Host, Content-Length and User-Agent are added
  std::string body;
};

// An answer that arrived (an exchange that brought none is the client's Result failure).
struct Response {
  int status = 0;      // the HTTP status the peer sent
  HeaderList headers;  // names lower-cased
  std::string body;
  // The first header of that (lower-case) name, or nullptr.
  [[nodiscard]] const std::string* header(std::string_view name) const;
};

}  // namespace seatflow::net

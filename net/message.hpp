// Absolute http(s) URLs and the request/response values: what the gateway dialects (channels/)
// and the outbound client (net/http_client) share. Plain data, no I/O, so the channel layer and
// the fuzz build need only this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// nullopt (with the reason in `why`) for anything but an absolute http(s) URL with a host.
[[nodiscard]] std::optional<Url> parse_url(std::string_view text, std::string* why);

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method = "GET";
  Url url;
  HeaderList headers;  // Host, Content-Length and User-Agent are added
  std::string body;
};

struct Response {
  int status = 0;      // 0 when no response arrived (then `error` says why)
  HeaderList headers;  // names lower-cased
  std::string body;
  std::string error;  // log-safe: never a header value or a body
  // The first header of that (lower-case) name, or nullptr.
  [[nodiscard]] const std::string* header(std::string_view name) const;
};

}  // namespace seatflow::net

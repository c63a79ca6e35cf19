// A small blocking HTTP/1.1 client (POSIX sockets, timeouts on every step) for the mock gateway,
// which must reach the engine's own notify endpoint over real HTTP. Never used on an io thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace seatflow::http {

struct ClientResponse {
  int status = 0;  // 0 when the request failed before a response arrived
  std::string body;
  std::string error;
};

// POSTs `body` to http://host:port/target, one connection per call; bounded by `timeout_ms`.
[[nodiscard]] ClientResponse post(const std::string& host, std::uint16_t port,
                                  const std::string& target, const std::string& content_type,
                                  const std::string& body,
                                  const std::vector<std::pair<std::string, std::string>>& headers,
                                  std::uint32_t timeout_ms);

}  // namespace seatflow::http

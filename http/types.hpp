// Plain request/response types between the Beast server and the handlers (keeps Beast in one TU).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "channels/channel.hpp"
#include "http/source.hpp"

namespace seatflow::http {

struct HttpRequest {
  std::string method;      // upper case, as sent
  std::string target;      // path and query
  std::string body;        // raw bytes
  codec::Headers headers;  // names lower-cased
  SourceAddress peer;      // the TCP peer's address
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Written this long after it was made (0: at once); the connection reads nothing meanwhile.
  std::uint32_t hold_ms = 0;
};

// Sends the response for the request it was given with; callable from any thread, exactly once.
using Respond = std::function<void(HttpResponse)>;

class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  virtual void handle(HttpRequest&& request, Respond respond) = 0;
};

}  // namespace seatflow::http

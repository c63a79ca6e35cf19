// How the server turns an HttpResponse into bytes: one buffer, one send. Beast's serializer walked
// a buffer sequence of many pieces per reply (~7 % of a duplicate's CPU). Header names and values
// are the engine's own, never the client's.
#pragma once

#include <boost/beast/http/status.hpp>

#include <string>

#include "http/types.hpp"

namespace seatflow::http::wire {

// `response` as HTTP/1.1 bytes into `out` (cleared first); `head`: the request was a HEAD (GET's
// headers, no body); `close`: the connection closes after it.
inline void serialize_response(std::string& out, const HttpResponse& response, bool head,
                               bool close) {
  const auto status = static_cast<boost::beast::http::status>(response.status);
  out.clear();
  out.append("HTTP/1.1 ").append(std::to_string(response.status)).append(" ");
  const auto reason = boost::beast::http::obsolete_reason(status);
  out.append(reason.data(), reason.size());
  out.append("\r\nServer: seatflow\r\nContent-Type: ").append(response.content_type);
  out.append("\r\nContent-Length: ").append(std::to_string(response.body.size()));
  for (const auto& [name, value] : response.headers) {
    out.append("\r\n").append(name).append(": ").append(value);
  }
  if (close) {
    out.append("\r\nConnection: close");
  }
  out.append("\r\n\r\n");
  if (!head) {
    out.append(response.body);
  }
}

}  // namespace seatflow::http::wire

// A tiny blocking HTTP/1.1 client on POSIX sockets for functional tests: every read has a deadline.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seatflow::testing {

struct Response {
  int status = 0;                              // 0 when no complete response arrived (see `error`)
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string error;  // why status is 0: timeout, closed, malformed

  [[nodiscard]] std::string header(const std::string& lower_name) const;
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// One keep-alive connection to 127.0.0.1:<port>. Bytes read past one response stay buffered for
// the next, so pipelined responses are read in order. Never throws; failures show in Response.
class HttpClient {
 public:
  explicit HttpClient(std::uint16_t port, int timeout_ms = 5000);
  // Connects from `source`, another loopback address ("127.0.0.2"): the engine sees another peer.
  HttpClient(std::uint16_t port, int timeout_ms, const std::string& source);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // False when the connection could not be made.
  [[nodiscard]] bool connected() const { return fd_ >= 0; }
  [[nodiscard]] const std::string& connect_error() const { return connect_error_; }

  // Sends one request (Host and Content-Length added) and reads its response.
  Response request(std::string_view method, std::string_view target, std::string_view body = {},
                   const HeaderList& headers = {});
  Response get(std::string_view target) { return request("GET", target); }
  Response post_json(std::string_view target, std::string_view body) {
    return request("POST", target, body, {{"Content-Type", "application/json"}});
  }

  // Writes the bytes as they are; false when the peer has gone or the write timed out.
  bool send_raw(std::string_view bytes);
  // Reads one response (status, headers, Content-Length or chunked body, or until close).
  Response read_response();
  Response read_response(int timeout_ms);
  // True when the peer closes (or resets) the connection within the timeout. Bytes that arrive
  // meanwhile (a final error response) are kept in the buffer.
  [[nodiscard]] bool is_closed_by_peer(int timeout_ms);
  // Bytes received but not yet consumed by read_response().
  [[nodiscard]] const std::string& buffered() const { return buffer_; }
  void close();

 private:
  enum class ReadStatus { data, closed, timeout, error };
  // Reads what is available into buffer_, waiting until the deadline (steady clock, ms).
  ReadStatus fill(std::int64_t deadline_ms);

  int fd_ = -1;
  int timeout_ms_;
  std::uint16_t port_;
  std::string buffer_;
  std::string connect_error_;
};

}  // namespace seatflow::testing

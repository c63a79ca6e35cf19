// Blocking HTTP POST: connect, write, read the status line, headers and Content-Length body.
#include "http/client.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace seatflow::http {
namespace {

constexpr std::size_t kMaxResponseBytes = 1 << 20;

class Socket {
 public:
  Socket() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) {}
  ~Socket() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  [[nodiscard]] int fd() const { return fd_; }

 private:
  int fd_;
};

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

bool wait_for(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  return ::poll(&p, 1, remaining_ms(deadline)) == 1;
}

bool write_all(int fd, const std::string& data, Clock::time_point deadline) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const auto n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(fd, POLLOUT, deadline)) {
        return false;
      }
    } else {
      return false;
    }
  }
  return true;
}

// Reads until the headers and the Content-Length body are in `raw`; false on timeout or error.
bool read_response(int fd, std::string& raw, Clock::time_point deadline) {
  char buffer[4096];
  std::size_t header_end = std::string::npos;
  std::size_t expected = std::string::npos;
  while (raw.size() < kMaxResponseBytes) {
    if (header_end == std::string::npos &&
        (header_end = raw.find("\r\n\r\n")) != std::string::npos) {
      const auto pos = raw.find("Content-Length:");
      expected = header_end + 4 +
                 (pos != std::string::npos && pos < header_end
                      ? std::strtoul(raw.c_str() + pos + 15, nullptr, 10)
                      : 0);
    }
    if (expected != std::string::npos && raw.size() >= expected) {
      return true;
    }
    if (!wait_for(fd, POLLIN, deadline)) {
      return false;
    }
    const auto n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) {
      return n == 0 && expected != std::string::npos && raw.size() >= expected;
    }
    raw.append(buffer, static_cast<std::size_t>(n));
  }
  return false;
}

}  // namespace

ClientResponse post(const std::string& host, std::uint16_t port, const std::string& target,
                    const std::string& content_type, const std::string& body,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    std::uint32_t timeout_ms) {
  ClientResponse out;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  Socket socket;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (socket.fd() < 0 || ::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    out.error = "bad address";
    return out;
  }
  if (::connect(socket.fd(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 &&
      (errno != EINPROGRESS || !wait_for(socket.fd(), POLLOUT, deadline))) {
    out.error = "connect failed";
    return out;
  }
  std::string request =
      "POST " + target + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: " + content_type +
      "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n";
  for (const auto& [name, value] : headers) {
    request += name + ": " + value + "\r\n";
  }
  request += "\r\n" + body;
  std::string raw;
  if (!write_all(socket.fd(), request, deadline) || !read_response(socket.fd(), raw, deadline)) {
    out.error = "no complete response in time";
    return out;
  }
  if (raw.size() < 12 || !raw.starts_with("HTTP/1.")) {
    out.error = "malformed response";
    return out;
  }
  out.status = std::atoi(raw.c_str() + 9);
  out.body = raw.substr(raw.find("\r\n\r\n") + 4);
  return out;
}

}  // namespace seatflow::http

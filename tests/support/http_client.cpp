// The functional tests' HTTP/1.1 client: non-blocking socket, poll() deadlines, response parsing.
#include "support/http_client.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

namespace seatflow::testing {
namespace {

// Responses larger than this are a test bug; reading stops instead of growing without bound.
constexpr std::size_t kMaxResponseBytes = 16 << 20;

std::int64_t steady_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int remaining_ms(std::int64_t deadline_ms) {
  return static_cast<int>(std::max<std::int64_t>(0, deadline_ms - steady_now_ms()));
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(" \t");
  return std::string(text.substr(first, last - first + 1));
}

std::optional<std::size_t> parse_size(std::string_view text, int base) {
  if (text.empty()) {
    return std::nullopt;
  }
  std::size_t value = 0;
  for (const char c : text) {
    int digit = -1;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    }
    if (digit < 0) {
      return std::nullopt;
    }
    value = value * static_cast<std::size_t>(base) + static_cast<std::size_t>(digit);
    if (value > kMaxResponseBytes) {
      return std::nullopt;
    }
  }
  return value;
}

// Parses the status line and header lines of `head` (without the final blank line).
bool parse_head(std::string_view head, Response& response) {
  const auto line_end = head.find("\r\n");
  const auto status_line = head.substr(0, line_end);
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12) {
    response.error = "malformed status line: " + std::string(status_line.substr(0, 80));
    return false;
  }
  const auto code = parse_size(status_line.substr(9, 3), 10);
  if (!code) {
    response.error = "malformed status code";
    return false;
  }
  std::size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    auto end = head.find("\r\n", pos);
    if (end == std::string_view::npos) {
      end = head.size();
    }
    const auto line = head.substr(pos, end - pos);
    const auto colon = line.find(':');
    if (colon != std::string_view::npos) {
      response.headers[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
    }
    pos = end + 2;
  }
  response.status = static_cast<int>(*code);
  return true;
}

}  // namespace

std::string Response::header(const std::string& lower_name) const {
  const auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

HttpClient::HttpClient(std::uint16_t port, int timeout_ms) : HttpClient(port, timeout_ms, {}) {}

HttpClient::HttpClient(std::uint16_t port, int timeout_ms, const std::string& source)
    : timeout_ms_(timeout_ms), port_(port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    connect_error_ = std::string("socket: ") + std::strerror(errno);
    return;
  }
  if (!source.empty()) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    if (::inet_pton(AF_INET, source.c_str(), &local.sin_addr) != 1 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      connect_error_ = "bind " + source + ": " + std::strerror(errno);
      ::close(fd);
      return;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port_);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    rc = ::poll(&p, 1, timeout_ms_);
    int so_error = 0;
    socklen_t len = sizeof so_error;
    if (rc == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) == 0 && so_error == 0) {
      rc = 0;
    } else {
      errno = rc == 0 ? ETIMEDOUT : (so_error != 0 ? so_error : errno);
      rc = -1;
    }
  }
  if (rc != 0) {
    connect_error_ = "connect 127.0.0.1:" + std::to_string(port_) + ": " + std::strerror(errno);
    ::close(fd);
    return;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fd_ = fd;
}

HttpClient::~HttpClient() {
  close();
}

void HttpClient::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

Response HttpClient::request(std::string_view method, std::string_view target,
                             std::string_view body, const HeaderList& headers) {
  std::string wire;
  wire.reserve(256 + body.size());
  wire.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
  wire.append("Host: 127.0.0.1:").append(std::to_string(port_)).append("\r\n");
  for (const auto& [name, value] : headers) {
    wire.append(name).append(": ").append(value).append("\r\n");
  }
  if (!body.empty() || method == "POST" || method == "PUT") {
    wire.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  wire.append("\r\n").append(body);
  if (!send_raw(wire)) {
    Response failed;
    failed.error = "send failed (connection closed?)";
    return failed;
  }
  return read_response();
}

bool HttpClient::send_raw(std::string_view bytes) {
  if (fd_ < 0) {
    return false;
  }
  const auto deadline = steady_now_ms() + timeout_ms_;
  while (!bytes.empty()) {
    const auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, remaining_ms(deadline)) <= 0) {
        return false;
      }
      continue;
    }
    return false;
  }
  return true;
}

HttpClient::ReadStatus HttpClient::fill(std::int64_t deadline_ms) {
  if (fd_ < 0) {
    return ReadStatus::closed;
  }
  if (buffer_.size() > kMaxResponseBytes) {
    return ReadStatus::error;
  }
  while (true) {
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, remaining_ms(deadline_ms));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready < 0) {
      return ReadStatus::error;
    }
    if (ready == 0) {
      return ReadStatus::timeout;
    }
    char chunk[16384];
    const auto n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      return ReadStatus::data;
    }
    if (n == 0) {
      return ReadStatus::closed;
    }
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
      continue;
    }
    return errno == ECONNRESET ? ReadStatus::closed : ReadStatus::error;
  }
}

Response HttpClient::read_response() {
  return read_response(timeout_ms_);
}

Response HttpClient::read_response(int timeout_ms) {
  const auto deadline = steady_now_ms() + timeout_ms;
  Response response;
  const auto fail = [&response](ReadStatus why, const char* stage) {
    response.status = 0;
    response.error = std::string(stage) + (why == ReadStatus::timeout  ? ": timed out"
                                           : why == ReadStatus::closed ? ": connection closed"
                                                                       : ": read error");
    return response;
  };
  std::size_t head_end = std::string::npos;
  while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (const auto why = fill(deadline); why != ReadStatus::data) {
      return fail(why, "waiting for the response head");
    }
  }
  if (!parse_head(std::string_view(buffer_).substr(0, head_end), response)) {
    buffer_.clear();
    return response;
  }
  buffer_.erase(0, head_end + 4);
  const auto length_header = response.header("content-length");
  if (!length_header.empty()) {
    const auto length = parse_size(length_header, 10);
    if (!length) {
      response.status = 0;
      response.error = "bad Content-Length";
      return response;
    }
    while (buffer_.size() < *length) {
      if (const auto why = fill(deadline); why != ReadStatus::data) {
        return fail(why, "reading the body");
      }
    }
    response.body = buffer_.substr(0, *length);
    buffer_.erase(0, *length);
    return response;
  }
  if (lower(response.header("transfer-encoding")).find("chunked") != std::string::npos) {
    while (true) {
      std::size_t line_end = std::string::npos;
      while ((line_end = buffer_.find("\r\n")) == std::string::npos) {
        if (const auto why = fill(deadline); why != ReadStatus::data) {
          return fail(why, "reading a chunk size");
        }
      }
      const auto size_text = std::string_view(buffer_).substr(0, line_end);
      const auto size = parse_size(size_text.substr(0, size_text.find(';')), 16);
      if (!size) {
        response.status = 0;
        response.error = "bad chunk size";
        return response;
      }
      while (buffer_.size() < line_end + 2 + *size + 2) {
        if (const auto why = fill(deadline); why != ReadStatus::data) {
          return fail(why, "reading a chunk");
        }
      }
      response.body.append(buffer_, line_end + 2, *size);
      buffer_.erase(0, line_end + 2 + *size + 2);
      if (*size == 0) {
        return response;
      }
    }
  }
  if (response.status == 204 || response.status == 304 || response.status / 100 == 1) {
    return response;
  }
  // No length: the body runs until the peer closes.
  while (true) {
    const auto why = fill(deadline);
    if (why == ReadStatus::closed) {
      response.body = std::move(buffer_);
      buffer_.clear();
      return response;
    }
    if (why != ReadStatus::data) {
      return fail(why, "reading a body delimited by close");
    }
  }
}

bool HttpClient::is_closed_by_peer(int timeout_ms) {
  if (fd_ < 0) {
    return true;
  }
  const auto deadline = steady_now_ms() + timeout_ms;
  while (true) {
    switch (fill(deadline)) {
      case ReadStatus::closed:
        return true;
      case ReadStatus::data:
        continue;
      case ReadStatus::timeout:
        return false;
      case ReadStatus::error:
        return true;
    }
  }
}

}  // namespace seatflow::testing

// Beast client: resolve, connect and (for https) a verified TLS handshake under the connect
// deadline, then write and read under the total deadline, the response parser bounded.
#include "net/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <stdexcept>
#include <vector>

#include <openssl/ssl.h>

namespace seatflow::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

struct HttpClient::Tls {
  asio::ssl::context context{asio::ssl::context::tls_client};
};

HttpClient::HttpClient(ClientLimits limits, const std::string& ca_file, ClientBounds bounds)
    : limits_(limits), tls_(std::make_unique<Tls>()) {
  limits_.connect_timeout_ms =
      std::clamp<std::uint32_t>(limits_.connect_timeout_ms, 1, kTimeoutMsMax);
  limits_.total_timeout_ms = std::clamp<std::uint32_t>(
      limits_.total_timeout_ms, limits_.connect_timeout_ms, bounds.timeout_ms_max);
  limits_.response_bytes_max =
      std::clamp<std::size_t>(limits_.response_bytes_max, 1024, bounds.response_bytes_max);
  auto& ctx = tls_->context;
  ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                  asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                  asio::ssl::context::no_tlsv1_1);
  ctx.set_verify_mode(asio::ssl::verify_peer);
  beast::error_code ec;
  if (ca_file.empty()) {
    ctx.set_default_verify_paths(ec);
  } else {
    ctx.load_verify_file(ca_file, ec);
  }
  if (ec) {
    throw std::runtime_error("cannot load the TLS trust store" +
                             (ca_file.empty() ? std::string() : " " + ca_file) + ": " +
                             ec.message());
  }
}

HttpClient::~HttpClient() = default;

namespace {

// Runs `io` until its handlers are done. With a cancel flag, looks at it every kCancelPollMs and,
// once it is true, closes the socket so every pending operation ends (operation_aborted).
void run_cancellable(asio::io_context& io, beast::tcp_stream& tcp_layer,
                     const std::atomic<bool>* cancel) {
  io.restart();
  if (cancel == nullptr) {
    io.run();
    return;
  }
  while (!io.stopped()) {
    io.run_for(std::chrono::milliseconds(kCancelPollMs));
    if (cancel->load() && !io.stopped()) {
      beast::error_code ignored;
      tcp_layer.socket().close(ignored);
    }
  }
}

// The request as Beast writes it (its method unknown when the text names none).
bhttp::request<bhttp::string_body> beast_request(const Request& request) {
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(request.method), request.url.target,
                                         11};
  const bool default_port = request.url.port == (request.url.tls ? 443 : 80);
  req.set(bhttp::field::host, default_port
                                  ? request.url.host
                                  : request.url.host + ":" + std::to_string(request.url.port));
  req.set(bhttp::field::user_agent, "SeatFlow");
  req.set(bhttp::field::connection, "close");
  for (const auto& [name, value] : request.headers) {
    req.set(name, value);
  }
  req.body() = request.body;
  req.prepare_payload();
  return req;
}

// The body is read this much at a time (into the Response, or handed to the sink).
constexpr std::size_t kBodyPieceBytes = 64 * 1024;

// One exchange's answer as it is read: the parser, the body's pieces and where they go (kept in
// `out.body`, or handed to the sink), and how the read ended.
struct AnswerRead {
  AnswerRead(const ClientLimits& limits, BodySink* body_sink) : sink(body_sink) {
    parser.header_limit(
        static_cast<std::uint32_t>(std::min<std::size_t>(limits.response_bytes_max, 64 * 1024)));
    parser.body_limit(limits.response_bytes_max);
  }
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::buffer_body> parser;
  std::vector<char> piece = std::vector<char>(kBodyPieceBytes);
  BodySink* sink;
  Response out;
  beast::error_code ec;
  bool streaming = false;
  bool refused = false;
  bool done = false;

  void end(beast::error_code code) {
    ec = code;
    done = true;
  }
};

// The body's next piece, and the one after it until the answer is whole.
template <class Stream>
void read_body(Stream& stream, AnswerRead& read) {
  read.parser.get().body().data = read.piece.data();
  read.parser.get().body().size = read.piece.size();
  bhttp::async_read_some(
      stream, read.buffer, read.parser, [&stream, &read](beast::error_code rec, std::size_t) {
        if (rec && rec != bhttp::error::need_buffer) {
          read.end(rec);
          return;
        }
        const std::string_view got(read.piece.data(),
                                   read.piece.size() - read.parser.get().body().size);
        if (!got.empty()) {
          if (!read.streaming) {
            read.out.body.append(got);
          } else if (!read.sink->piece(got)) {
            read.refused = true;
            read.end({});
            return;
          }
        }
        if (read.parser.is_done()) {
          read.end({});
          return;
        }
        read_body(stream, read);
      });
}

// The status and headers, then the body.
template <class Stream>
void read_answer(Stream& stream, AnswerRead& read, std::size_t bytes_max) {
  bhttp::async_read_header(
      stream, read.buffer, read.parser,
      [&stream, &read, bytes_max](beast::error_code hec, std::size_t) {
        // Beast 1.74 checks body_limit against chunked and EOF-delimited bodies but not against a
        // Content-Length, so that one is checked here, before a byte of the body is read.
        if (!hec && read.parser.content_length() && *read.parser.content_length() > bytes_max) {
          hec = bhttp::error::body_limit;
        }
        if (hec) {
          read.end(hec);
          return;
        }
        const auto& head = read.parser.get();
        read.out.status = static_cast<int>(head.result_int());
        for (const auto& field : head) {
          read.out.headers.emplace_back(lower(field.name_string()), std::string(field.value()));
        }
        read.streaming = read.sink != nullptr && read.sink->begin(read.out);
        if (read.parser.is_done()) {
          read.end({});
          return;
        }
        read_body(stream, read);
      });
}

template <class Stream>
Result<Response> exchange(Stream& stream, const Request& request, const ClientLimits& limits,
                          asio::io_context& io, beast::tcp_stream& tcp_layer,
                          std::chrono::steady_clock::time_point deadline,
                          const std::atomic<bool>* cancel, BodySink* sink) {
  auto req = beast_request(request);
  if (req.method() == bhttp::verb::unknown) {
    return failed(errc::bad_request, "unsupported method");
  }
  AnswerRead read(limits, sink);
  tcp_layer.expires_at(deadline);
  bhttp::async_write(stream, req, [&](beast::error_code wec, std::size_t) {
    if (wec) {
      read.end(wec);
      return;
    }
    tcp_layer.expires_at(deadline);
    read_answer(stream, read, limits.response_bytes_max);
  });
  run_cancellable(io, tcp_layer, cancel);
  if (cancel != nullptr && cancel->load()) {
    return failed(errc::cancelled, "cancelled");
  }
  if (read.refused) {
    return failed(errc::refused_by_reader, "body refused by its reader");
  }
  const auto& ec = read.ec;
  if (ec == beast::error::timeout) {
    return failed(errc::timed_out, "timed out");
  }
  if (ec == bhttp::error::body_limit) {
    return failed(errc::too_large, "response over the size limit");
  }
  if (!read.done || ec) {
    return failed(errc::unreachable, "exchange failed: " + ec.message());
  }
  return std::move(read.out);
}

// Resolves the host and connects, both under the connect deadline (a resolver that hangs is
// cancelled too).
Result<void> resolve_and_connect(asio::io_context& io, beast::tcp_stream& tcp_layer, const Url& url,
                                 std::chrono::steady_clock::time_point deadline) {
  tcp::resolver resolver(io);
  beast::error_code ec;
  bool connected = false;
  asio::steady_timer resolve_timer(io);
  resolve_timer.expires_at(deadline);
  resolve_timer.async_wait([&](beast::error_code timer_ec) {
    if (!timer_ec) {
      resolver.cancel();
    }
  });
  resolver.async_resolve(url.host, std::to_string(url.port),
                         [&](beast::error_code rec, tcp::resolver::results_type results) {
                           resolve_timer.cancel();
                           if (rec) {
                             ec = rec;
                             return;
                           }
                           tcp_layer.expires_at(deadline);
                           tcp_layer.async_connect(
                               results, [&](beast::error_code cec, const tcp::endpoint&) {
                                 ec = cec;
                                 connected = !cec;
                               });
                         });
  io.run();
  if (connected) {
    return {};
  }
  if (ec == beast::error::timeout || ec == asio::error::operation_aborted) {
    return failed(errc::timed_out, "connect timed out");
  }
  return failed(errc::unreachable, "connect failed: " + ec.message());
}

}  // namespace

Result<Response> HttpClient::send(const Request& request, const std::atomic<bool>* cancel,
                                  BodySink* sink) const {
  try {
    asio::io_context io(1);
    const auto start = std::chrono::steady_clock::now();
    const auto connect_deadline = start + std::chrono::milliseconds(limits_.connect_timeout_ms);
    const auto deadline = start + std::chrono::milliseconds(limits_.total_timeout_ms);
    beast::tcp_stream tcp_layer(io);
    if (auto connected = resolve_and_connect(io, tcp_layer, request.url, connect_deadline);
        !connected.ok()) {
      return std::move(connected).failure();
    }
    if (!request.url.tls) {
      auto out = exchange(tcp_layer, request, limits_, io, tcp_layer, deadline, cancel, sink);
      beast::error_code ignored;
      tcp_layer.socket().shutdown(tcp::socket::shutdown_both, ignored);
      return out;
    }
    beast::ssl_stream<beast::tcp_stream&> tls(tcp_layer, tls_->context);
    if (!SSL_set_tlsext_host_name(tls.native_handle(), request.url.host.c_str())) {
      return failed(errc::unreachable, "cannot set the TLS server name");
    }
    tls.set_verify_callback(asio::ssl::host_name_verification(request.url.host));
    beast::error_code ec;
    bool shaken = false;
    tcp_layer.expires_at(connect_deadline);
    tls.async_handshake(asio::ssl::stream_base::client, [&](beast::error_code hec) {
      ec = hec;
      shaken = !hec;
    });
    io.restart();
    io.run();
    if (!shaken) {
      return ec == beast::error::timeout
                 ? failed(errc::timed_out, "TLS handshake timed out")
                 : failed(errc::unreachable, "TLS handshake failed: " + ec.message());
    }
    return exchange(tls, request, limits_, io, tcp_layer, deadline, cancel, sink);
  } catch (const std::exception& error) {
    // Asio's and OpenSSL's own allocation or system failures; the exchange's errors are codes.
    return failed(errc::unreachable, std::string("request failed: ") + error.what());
  }
}

}  // namespace seatflow::net

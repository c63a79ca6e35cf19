// Boost.Beast server: a listener and one session per connection. Each io thread runs its own
// io_context and owns the sessions accepted onto it, so a session's handlers never run
// concurrently and need no strand (measured: strands and type-erased executors were ~10 % of a
// duplicate's CPU). A session reads one request at a time (pipelined requests wait in its buffer,
// so replies keep their order), hands it to the handler, and resumes reading only after the reply
// is written.
#include "http/server.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <optional>
#include <thread>
#include <vector>

#include "http/log.hpp"
#include "http/request_reader.hpp"

namespace seatflow::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

using Executor = net::io_context::executor_type;
using Stream = beast::basic_stream<tcp, Executor>;

constexpr std::size_t kFirstReadBytes = 4096;
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(50);

struct Shared {
  HttpConfig config;
  RequestHandler& handler;
  HttpProbe& probe;
  std::atomic<std::size_t> connections{0};
  // Set by stop_accepting(): a request read from now on is answered 503 and its connection
  // closed, so nothing reaches the engine while it flushes and stops.
  std::atomic<bool> draining{false};
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(net::basic_stream_socket<tcp, Executor>&& socket, Shared& shared, bool refuse)
      : stream_(std::move(socket)),
        buffer_(wire::session_buffer_bytes_max(shared.config)),
        shared_(shared),
        refuse_(refuse) {
    shared_.connections.fetch_add(1, std::memory_order_relaxed);
  }
  ~Session() { shared_.connections.fetch_sub(1, std::memory_order_relaxed); }

  void run() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->start(); });
  }

 private:
  void start() {
    if (refuse_) {
      write({503, "text/plain", "too many connections", {{"Retry-After", "1"}}}, true);
      return;
    }
    wait_for_request();
  }

  // An idle keep-alive connection may wait `idle_timeout_ms` for its next request to begin.
  void wait_for_request() {
    if (buffer_.size() > 0) {
      read_request();
      return;
    }
    stream_.expires_after(std::chrono::milliseconds(shared_.config.idle_timeout_ms));
    stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->on_first_bytes(ec, n);
                            });
  }

  void on_first_bytes(beast::error_code ec, std::size_t n) {
    if (ec) {
      do_close();
      return;
    }
    buffer_.commit(n);
    read_request();
  }

  // Once a request has begun, all of it must arrive within `read_timeout_ms` (no slow loris).
  void read_request() {
    parser_.emplace();
    wire::apply_limits(*parser_, shared_.config);
    stream_.expires_after(std::chrono::milliseconds(shared_.config.read_timeout_ms));
    bhttp::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (wire::is_disconnect(ec)) {
      do_close();
      return;
    }
    if (ec) {
      write(wire::parse_failure_response(ec), true);
      return;
    }
    auto message = parser_->release();
    keep_alive_ = message.keep_alive();
    if (auto refusal = wire::framing_refusal(message)) {
      write(std::move(*refusal), true);
      return;
    }
    if (shared_.draining.load(std::memory_order_acquire)) {
      write({503, "text/plain", "shutting down", {{"Retry-After", "1"}}}, true);
      return;
    }
    auto request = wire::to_request(std::move(message));
    // The handler answers within the engine's commit timeout; no read is pending meanwhile.
    stream_.expires_never();
    try {
      // A reply made on this io thread (a refusal, a memory answer) is written at once; one made
      // on an actor thread is posted here. Either way write() starts no read: on_read is done.
      shared_.handler.handle(std::move(request),
                             [self = shared_from_this()](HttpResponse response) {
                               net::dispatch(self->stream_.get_executor(),
                                             [self, response = std::move(response)]() mutable {
                                               self->write(std::move(response), false);
                                             });
                             });
    } catch (const std::exception& error) {
      // A handler bug must cost one request, not the process.
      logger().error("event=handler_exception error=\"{}\"", error.what());
      write({500, "text/plain", "internal error", {}}, true);
    }
  }

  // Serialised here into one buffer, one send: Beast's serializer walked a buffer sequence of
  // many pieces per reply (~7 % of a duplicate's CPU). Header names and values are the engine's
  // own, never the client's.
  void write(HttpResponse response, bool close) {
    close_after_write_ = !keep_alive_ || close;
    const auto status = static_cast<bhttp::status>(response.status);
    out_.clear();
    out_.append("HTTP/1.1 ").append(std::to_string(response.status)).append(" ");
    const auto reason = bhttp::obsolete_reason(status);
    out_.append(reason.data(), reason.size());
    out_.append("\r\nServer: seatflow\r\nContent-Type: ").append(response.content_type);
    out_.append("\r\nContent-Length: ").append(std::to_string(response.body.size()));
    for (const auto& [name, value] : response.headers) {
      out_.append("\r\n").append(name).append(": ").append(value);
    }
    if (close_after_write_) {
      out_.append("\r\nConnection: close");
    }
    out_.append("\r\n\r\n").append(response.body);
    stream_.expires_after(std::chrono::milliseconds(shared_.config.read_timeout_ms));
    net::async_write(
        stream_, net::buffer(out_),
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(beast::error_code ec) {
    if (ec || close_after_write_) {
      do_close();
      return;
    }
    wait_for_request();
  }

  void do_close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<wire::RequestParser> parser_;
  std::string out_;  // the reply being written
  Shared& shared_;
  bool refuse_;
  bool keep_alive_ = false;
  bool close_after_write_ = false;
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Listens on the first io_context; accepted connections go round robin over all of them.
  Listener(std::vector<std::unique_ptr<net::io_context>>& contexts, Shared& shared)
      : contexts_(contexts),
        acceptor_(*contexts.front()),
        retry_timer_(*contexts.front()),
        shared_(shared) {}

  std::string open(const std::string& host, std::uint16_t port) {
    beast::error_code ec;
    const auto address = net::ip::make_address(host, ec);
    if (ec) {
      return "SEATFLOW_HTTP_ADDR host '" + host + "' is not an IP address";
    }
    const tcp::endpoint endpoint{address, port};
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) {
      acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    }
    if (!ec) {
      acceptor_.bind(endpoint, ec);
    }
    if (!ec) {
      acceptor_.listen(net::socket_base::max_listen_connections, ec);
    }
    if (ec) {
      return "cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message();
    }
    return {};
  }

  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

  void accept() {
    auto& target = *contexts_[next_context_++ % contexts_.size()];
    acceptor_.async_accept(
        target, [self = shared_from_this()](beast::error_code ec,
                                            net::basic_stream_socket<tcp, Executor> socket) {
          self->on_accept(ec, std::move(socket));
        });
  }

  void close() {
    net::post(acceptor_.get_executor(), [self = shared_from_this()] {
      beast::error_code ignored;
      self->acceptor_.close(ignored);
      self->retry_timer_.cancel();
    });
  }

 private:
  void on_accept(beast::error_code ec, net::basic_stream_socket<tcp, Executor> socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) {
      return;
    }
    if (ec) {
      // Out of descriptors or similar: back off briefly instead of spinning.
      logger().warn("event=accept_failed error={}", ec.message());
      retry_timer_.expires_after(kAcceptRetryDelay);
      retry_timer_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
        if (!wait_ec) {
          self->accept();
        }
      });
      return;
    }
    const bool refuse =
        shared_.connections.load(std::memory_order_relaxed) >= shared_.config.connections_max;
    if (refuse) {
      shared_.probe.count_overload();
    }
    std::make_shared<Session>(std::move(socket), shared_, refuse)->run();
    accept();
  }

  std::vector<std::unique_ptr<net::io_context>>& contexts_;
  std::size_t next_context_ = 0;
  net::basic_socket_acceptor<tcp, Executor> acceptor_;
  net::steady_timer retry_timer_;
  Shared& shared_;
};

}  // namespace

struct HttpServer::Impl {
  Impl(HttpConfig config, RequestHandler& handler, HttpProbe& probe)
      : contexts(make_contexts(config.io_threads)),
        shared{std::move(config), handler, probe},
        listener(std::make_shared<Listener>(contexts, shared)) {}

  static std::vector<std::unique_ptr<net::io_context>> make_contexts(std::size_t count) {
    std::vector<std::unique_ptr<net::io_context>> contexts;
    for (std::size_t i = 0; i < std::max<std::size_t>(1, count); ++i) {
      contexts.push_back(std::make_unique<net::io_context>(1));  // one thread runs each
    }
    return contexts;
  }

  std::vector<std::unique_ptr<net::io_context>> contexts;
  Shared shared;
  std::shared_ptr<Listener> listener;
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
};

HttpServer::HttpServer(HttpConfig config, RequestHandler& handler, HttpProbe& probe)
    : impl_(std::make_unique<Impl>(std::move(config), handler, probe)) {}

namespace {

// An exception escaping a completion handler unwinds out of run(); it is logged and the context
// runs on, so one bad handler costs its own connection, not the io thread and every connection on
// it. Each turn of the loop is one such exception; run() returns when stop() stops the context.
void run_logging_exceptions(net::io_context& ioc) {
  for (;;) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& error) {
      logger().error("event=io_thread_exception error=\"{}\"", error.what());
    } catch (...) {
      logger().error("event=io_thread_exception error=unknown");
    }
  }
}

}  // namespace

HttpServer::~HttpServer() {
  stop();
}

std::string HttpServer::start() {
  auto error = impl_->listener->open(impl_->shared.config.host, impl_->shared.config.port);
  if (!error.empty()) {
    return error;
  }
  impl_->port = impl_->listener->port();
  impl_->listener->accept();
  for (auto& context : impl_->contexts) {
    // Kept running while it has no connection yet; stop() ends it.
    impl_->threads.emplace_back([ioc = context.get()] {
      auto guard = net::make_work_guard(*ioc);
      run_logging_exceptions(*ioc);
    });
  }
  return {};
}

void HttpServer::stop_accepting() {
  impl_->shared.draining.store(true, std::memory_order_release);
  impl_->listener->close();
}

void HttpServer::stop() {
  if (!impl_) {
    return;
  }
  for (auto& context : impl_->contexts) {
    context->stop();
  }
  for (auto& thread : impl_->threads) {
    if (thread.joinable()) {
      thread.join();
    }
  }
  impl_->threads.clear();
}

std::uint16_t HttpServer::port() const {
  return impl_->port;
}

std::size_t HttpServer::open_connections() const {
  return impl_->shared.connections.load(std::memory_order_relaxed);
}

}  // namespace seatflow::http

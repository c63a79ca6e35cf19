// Boost.Beast server: a listener and one session per connection. Each io thread runs its own
// io_context and owns the sessions accepted onto it, so a session's handlers never run
// concurrently and need no strand (measured: strands and type-erased executors were ~10 % of a
// duplicate's CPU). A session reads one request at a time (pipelined requests wait in its buffer,
// so replies keep their order), hands it to the handler, and resumes reading only after the reply
// is written. Its timeouts are deadlines that one sweep per io thread checks (see IoThread).
#include "http/server.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <time.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "http/log.hpp"
#include "http/request_reader.hpp"
#include "http/response_writer.hpp"
#include "http/source.hpp"

namespace seatflow::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

using Executor = net::io_context::executor_type;
using Socket = net::basic_stream_socket<tcp, Executor>;

constexpr std::size_t kFirstReadBytes = 4096;
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(50);
// The deadline sweep runs every quarter of the shorter timeout, within these bounds: a connection
// overstays its timeout by at most one period.
constexpr auto kDeadlineSweepMin = std::chrono::milliseconds(10);
constexpr auto kDeadlineSweepMax = std::chrono::milliseconds(100);

// Deadlines are read from CLOCK_MONOTONIC_COARSE: a few ns from the vDSO, at the kernel tick's
// resolution (1-4 ms), ample for timeouts of 100 ms and more (SEATFLOW_READ_TIMEOUT_MS' minimum).
using Deadline = std::chrono::nanoseconds;
constexpr Deadline kNoDeadline = Deadline::max();
// How long a cancelled read may take to complete before its socket is closed outright.
constexpr Deadline kCancelGrace = std::chrono::seconds(1);

Deadline coarse_now() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

class Session;

// One io thread: its io_context, the sessions accepted onto it, and the sweep that closes those
// whose deadline has passed. A timer per read and write (Beast's basic_stream arms, cancels and
// dispatches one for each) cost ~14 % of a storm duplicate's CPU; a deadline costs a store.
struct IoThread {
  net::io_context context{1};  // one thread runs it
  net::steady_timer sweep{context};
  std::vector<std::weak_ptr<Session>> sessions;  // touched on this thread only
};

// Open connections by source (the TCP peer), for SEATFLOW_CONNECTIONS_PER_SOURCE_MAX. Taken at
// accept and given back when a session ends, on any io thread: one lock each, not per request.
class SourceConnections {
 public:
  // False, counting nothing, when `source` already holds `max` connections.
  bool try_add(const SourceAddress& source, std::size_t max) {
    const std::lock_guard lock(mutex_);
    auto& open = open_[source];
    if (open >= max) {
      if (open == 0) {
        open_.erase(source);
      }
      return false;
    }
    ++open;
    return true;
  }
  void remove(const SourceAddress& source) {
    const std::lock_guard lock(mutex_);
    const auto found = open_.find(source);
    if (found != open_.end() && --found->second == 0) {
      open_.erase(found);
    }
  }

 private:
  std::mutex mutex_;
  std::unordered_map<SourceAddress, std::size_t, SourceAddressHash> open_;
};

SourceAddress source_of(const tcp::endpoint& peer) {
  const auto address = peer.address();
  if (address.is_v4()) {
    return ipv4_address(address.to_v4().to_uint());
  }
  SourceAddress source;
  const auto bytes = address.to_v6().to_bytes();
  std::copy(bytes.begin(), bytes.end(), source.bytes.begin());
  return source;
}

struct Shared {
  HttpConfig config;
  RequestHandler& handler;
  HttpProbe& probe;
  std::atomic<std::size_t> connections{0};
  SourceConnections per_source{};
  // Set by stop_accepting(): a request read from now on is answered 503 and its connection
  // closed, so nothing reaches the engine while it flushes and stops.
  std::atomic<bool> draining{false};
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `counted`: the connection holds one of its source's places (given back at its end).
  Session(Socket&& socket, IoThread& io, Shared& shared, SourceAddress peer, bool counted,
          bool refuse)
      : socket_(std::move(socket)),
        buffer_(wire::session_buffer_bytes_max(shared.config)),
        io_(io),
        shared_(shared),
        peer_(peer),
        counted_(counted),
        refuse_(refuse) {
    shared_.connections.fetch_add(1, std::memory_order_relaxed);
  }
  ~Session() {
    shared_.connections.fetch_sub(1, std::memory_order_relaxed);
    if (counted_) {
      shared_.per_source.remove(peer_);
    }
  }

  void run() {
    net::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->start(); });
  }

  // Called by the sweep on this session's io thread. Past its deadline, a request being read is
  // cut: its read is cancelled and answered 408 before the connection closes. Otherwise (waiting
  // for a request, writing a reply) the socket is closed and the pending operation completes with
  // operation_aborted: the connection just closes.
  void expire_if_due(Deadline now) {
    if (now < deadline_) {
      return;
    }
    deadline_ = kNoDeadline;
    beast::error_code ignored;
    if (reading_request_ && !timed_out_) {
      timed_out_ = true;
      socket_.cancel(ignored);
      // Should the parser have started another read after a completion already queued, the next
      // sweep past this grace closes the socket instead.
      deadline_ = now + kCancelGrace;
      return;
    }
    socket_.close(ignored);
  }

 private:
  void expires_after(std::uint32_t timeout_ms) {
    deadline_ = coarse_now() + std::chrono::milliseconds(timeout_ms);
  }

  void start() {
    io_.sessions.push_back(weak_from_this());
    if (refuse_) {
      write({503, "text/plain", "too many connections", {{"Retry-After", "1"}}}, true);
      return;
    }
    wait_for_request();
  }

  // A new connection's first byte must arrive within `header_timeout_ms` of accept (an idle
  // socket holds no slot for long); an idle keep-alive connection may wait `idle_timeout_ms` for
  // its next request to begin.
  void wait_for_request() {
    if (buffer_.size() > 0) {
      read_request();
      return;
    }
    expires_after(answered_ ? shared_.config.idle_timeout_ms : shared_.config.header_timeout_ms);
    socket_.async_read_some(buffer_.prepare(kFirstReadBytes),
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
    header_scan_ = {};
    head_ = false;
    reading_request_ = true;
    expires_after(shared_.config.read_timeout_ms);
    parse_header();
  }

  // The header section goes through the obs-fold scan before the parser sees it; the parser runs
  // on each arrival all the same (it refuses a bad request line at once), and the body is read by
  // Beast once the header is parsed.
  void parse_header() {
    const auto held =
        std::string_view(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    if (header_scan_.scan(held) == wire::HeaderScan::State::folded) {
      write({400, "text/plain", "obs-fold (a folded header line) is not accepted", {}}, true);
      return;
    }
    beast::error_code ec;
    const auto used = held.empty() ? 0 : parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    header_scan_.consumed(used);
    if (parser_->is_header_done()) {
      if (parser_->is_done()) {
        on_read({});
        return;
      }
      bhttp::async_read(socket_, buffer_, *parser_,
                        [self = shared_from_this()](beast::error_code read_ec, std::size_t) {
                          self->on_read(read_ec);
                        });
      return;
    }
    if (ec && ec != bhttp::error::need_more) {
      on_read(ec);
      return;
    }
    const auto room = std::min(kFirstReadBytes, buffer_.max_size() - buffer_.size());
    if (room == 0) {
      on_read(bhttp::error::header_limit);
      return;
    }
    socket_.async_read_some(buffer_.prepare(room),
                            [self = shared_from_this()](beast::error_code read_ec, std::size_t n) {
                              self->on_header_bytes(read_ec, n);
                            });
  }

  void on_header_bytes(beast::error_code ec, std::size_t n) {
    if (ec || timed_out_) {
      on_read(ec ? ec : net::error::operation_aborted);
      return;
    }
    buffer_.commit(n);
    parse_header();
  }

  void on_read(beast::error_code ec) {
    reading_request_ = false;
    if (timed_out_) {
      // The read deadline cut the request (RFC 9110 §15.5.9): answered, then closed.
      timed_out_ = false;
      keep_alive_ = false;
      write({408, "text/plain", "request not received within the read timeout", {}}, true);
      return;
    }
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
    head_ = message.method() == bhttp::verb::head;
    if (auto refusal = wire::framing_refusal(message)) {
      write(std::move(*refusal), true);
      return;
    }
    if (shared_.draining.load(std::memory_order_acquire)) {
      write({503, "text/plain", "shutting down", {{"Retry-After", "1"}}}, true);
      return;
    }
    auto request = wire::to_request(std::move(message));
    request.peer = peer_;
    // The handler answers within the engine's commit timeout; no read is pending meanwhile.
    deadline_ = kNoDeadline;
    try {
      // A reply made on this io thread (a refusal, a memory answer) is written at once; one made
      // on an actor thread is posted here. Either way write() starts no read: on_read is done.
      shared_.handler.handle(std::move(request),
                             [self = shared_from_this()](HttpResponse response) {
                               net::dispatch(self->socket_.get_executor(),
                                             [self, response = std::move(response)]() mutable {
                                               self->answer(std::move(response));
                                             });
                             });
    } catch (const std::exception& error) {
      // A handler bug must cost one request, not the process.
      logger().error("event=handler_exception error={}", quoted_value(error.what()));
      write({500, "text/plain", "internal error", {}}, true);
    }
  }

  // A reply held by the front door (a source that floods while refused) is written after its hold;
  // the connection reads nothing meanwhile, so each of its connections costs one request per hold.
  void answer(HttpResponse response) {
    if (response.hold_ms == 0) {
      write(std::move(response), false);
      return;
    }
    if (!hold_timer_) {
      hold_timer_.emplace(socket_.get_executor());
    }
    hold_timer_->expires_after(std::chrono::milliseconds(response.hold_ms));
    hold_timer_->async_wait(
        [self = shared_from_this(), response = std::move(response)](beast::error_code ec) mutable {
          if (ec) {
            self->do_close();
            return;
          }
          self->write(std::move(response), false);
        });
  }

  void write(HttpResponse response, bool close) {
    close_after_write_ = !keep_alive_ || close;
    wire::serialize_response(out_, response, head_, close_after_write_);
    expires_after(shared_.config.read_timeout_ms);
    net::async_write(
        socket_, net::buffer(out_),
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(beast::error_code ec) {
    deadline_ = kNoDeadline;
    answered_ = true;
    if (ec || close_after_write_) {
      do_close();
      return;
    }
    wait_for_request();
  }

  void do_close() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
  }

  Socket socket_;
  beast::flat_buffer buffer_;
  std::optional<wire::RequestParser> parser_;
  std::string out_;                              // the reply being written
  std::optional<net::steady_timer> hold_timer_;  // made for the first held reply
  IoThread& io_;
  Shared& shared_;
  Deadline deadline_ = kNoDeadline;  // of the pending read or write; none while the handler runs
  wire::HeaderScan header_scan_;     // of the request being read
  SourceAddress peer_;
  bool counted_;  // holds one of the peer's places (SEATFLOW_CONNECTIONS_PER_SOURCE_MAX)
  bool refuse_;
  bool answered_ = false;         // a reply was written: the next wait is an idle keep-alive's
  bool reading_request_ = false;  // a request has begun and is being read: its deadline means 408
  bool timed_out_ = false;        // the sweep cut the request being read
  bool head_ = false;             // the request being answered is a HEAD
  bool keep_alive_ = false;
  bool close_after_write_ = false;
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Listens on the first io_context; accepted connections go round robin over all of them.
  Listener(std::vector<std::unique_ptr<IoThread>>& threads, Shared& shared)
      : threads_(threads),
        acceptor_(threads.front()->context),
        retry_timer_(threads.front()->context),
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
    auto& target = *threads_[next_thread_++ % threads_.size()];
    acceptor_.async_accept(
        target.context, [self = shared_from_this(), &target](beast::error_code ec, Socket socket) {
          self->on_accept(ec, std::move(socket), target);
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
  void on_accept(beast::error_code ec, Socket socket, IoThread& target) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) {
      return;
    }
    if (ec) {
      // Out of descriptors or similar: back off briefly instead of spinning.
      logger().warn("event=accept_failed error={}", quoted_value(ec.message()));
      retry_timer_.expires_after(kAcceptRetryDelay);
      retry_timer_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
        if (!wait_ec) {
          self->accept();
        }
      });
      return;
    }
    beast::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    if (peer_ec) {
      accept();  // gone already; the socket closes here
      return;
    }
    // Over either cap the connection is answered 503 and closed.
    const auto source = source_of(peer);
    const bool counted =
        shared_.per_source.try_add(source, shared_.config.connections_per_source_max);
    const bool refuse = !counted || shared_.connections.load(std::memory_order_relaxed) >=
                                        shared_.config.connections_max;
    if (refuse) {
      shared_.probe.count_overload();
    }
    std::make_shared<Session>(std::move(socket), target, shared_, source, counted, refuse)->run();
    accept();
  }

  std::vector<std::unique_ptr<IoThread>>& threads_;
  std::size_t next_thread_ = 0;
  net::basic_socket_acceptor<tcp, Executor> acceptor_;
  net::steady_timer retry_timer_;
  Shared& shared_;
};

}  // namespace

struct HttpServer::Impl {
  Impl(HttpConfig config, RequestHandler& handler, HttpProbe& probe)
      : io(make_io_threads(config.io_threads)),
        shared{std::move(config), handler, probe},
        listener(std::make_shared<Listener>(io, shared)) {}

  static std::vector<std::unique_ptr<IoThread>> make_io_threads(std::size_t count) {
    std::vector<std::unique_ptr<IoThread>> io;
    for (std::size_t i = 0; i < std::max<std::size_t>(1, count); ++i) {
      io.push_back(std::make_unique<IoThread>());
    }
    return io;
  }

  std::vector<std::unique_ptr<IoThread>> io;
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
// One sweep of an io thread's sessions: closes those past their deadline, forgets those gone, and
// runs again after `period`. Runs on the io thread, like everything that touches its sessions.
void sweep_deadlines(IoThread& io, std::chrono::milliseconds period) {
  const auto now = coarse_now();
  std::erase_if(io.sessions, [now](const std::weak_ptr<Session>& weak) {
    const auto session = weak.lock();
    if (!session) {
      return true;
    }
    session->expire_if_due(now);
    return false;
  });
  io.sweep.expires_after(period);
  io.sweep.async_wait([&io, period](beast::error_code ec) {
    if (!ec) {
      sweep_deadlines(io, period);
    }
  });
}

void run_logging_exceptions(net::io_context& ioc) {
  for (;;) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& error) {
      logger().error("event=io_thread_exception error={}", quoted_value(error.what()));
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
  const auto& config = impl_->shared.config;
  const auto period = std::clamp(
      std::chrono::milliseconds(
          std::min({config.read_timeout_ms, config.idle_timeout_ms, config.header_timeout_ms}) / 4),
      kDeadlineSweepMin, kDeadlineSweepMax);
  for (auto& io : impl_->io) {
    net::post(io->context, [io = io.get(), period] { sweep_deadlines(*io, period); });
    // Kept running while it has no connection yet; stop() ends it.
    impl_->threads.emplace_back([ioc = &io->context] {
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
  for (auto& io : impl_->io) {
    io->context.stop();
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

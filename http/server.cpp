// Boost.Beast server: a listener and the io threads. Each io thread runs its own io_context and
// owns the sessions accepted onto it (http/session.hpp), so a session's handlers never run
// concurrently and need no strand (measured: strands and type-erased executors were ~10 % of a
// duplicate's CPU). Sessions' timeouts are deadlines that one sweep per io thread checks; a full
// connection table makes room by closing a held or silent session before it refuses one.
#include "http/server.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>

#include <algorithm>
#include <thread>
#include <vector>

#include "http/log.hpp"
#include "http/session.hpp"
#include "http/source.hpp"

namespace seatflow::http {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using detail::IoThread;
using detail::Shared;
using detail::Socket;

constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(50);
// The deadline sweep runs every quarter of the shorter timeout, within these bounds: a connection
// overstays its timeout by at most one period.
constexpr auto kDeadlineSweepMin = std::chrono::milliseconds(10);
constexpr auto kDeadlineSweepMax = std::chrono::milliseconds(100);

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
    // Over the source's cap the connection is answered 503 and closed; over the table's too, unless
    // a held or silent session elsewhere is closed to make room for it. A trusted proxy is
    // no source: every sender behind it shares its connections, so it has no cap of its own.
    const auto source = source_of(peer);
    const bool proxy = contains_any(shared_.config.front_door.trusted_proxies, source);
    const bool counted =
        !proxy && shared_.per_source.try_add(source, shared_.config.connections_per_source_max);
    const bool refuse =
        (!proxy && !counted) ||
        (shared_.connections.load(std::memory_order_relaxed) >= shared_.config.connections_max &&
         !make_room());
    if (refuse) {
      shared_.probe.count_overload();
    }
    detail::start_session(std::move(socket), target, shared_, source, counted, refuse);
    accept();
  }

  // Asks an io thread that holds a session of the first Idle kind any thread holds to close it
  // (detail::evict_one); false when no session is evictable beyond those already asked for.
  bool make_room() {
    IoThread* chosen = nullptr;
    std::size_t evictable = 0;
    for (std::size_t kind = 0; kind < detail::kIdleKinds; ++kind) {
      for (auto& io : threads_) {
        const auto count = io->idle[kind].load(std::memory_order_relaxed);
        evictable += count;
        if (chosen == nullptr && count > 0) {
          chosen = io.get();
        }
      }
    }
    if (chosen == nullptr ||
        evictable <= shared_.evictions_pending.load(std::memory_order_relaxed)) {
      return false;
    }
    shared_.evictions_pending.fetch_add(1, std::memory_order_relaxed);
    net::post(chosen->context, [io = chosen, &shared = shared_] {
      detail::evict_one(*io);
      shared.evictions_pending.fetch_sub(1, std::memory_order_relaxed);
    });
    return true;
  }

  std::vector<std::unique_ptr<IoThread>>& threads_;
  std::size_t next_thread_ = 0;
  net::basic_socket_acceptor<tcp, detail::Executor> acceptor_;
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

// One sweep of an io thread's sessions: closes those past their deadline, forgets those gone, and
// runs again after `period`. Runs on the io thread, like everything that touches its sessions.
void sweep_deadlines(IoThread& io, std::chrono::milliseconds period) {
  detail::expire_due_sessions(io, detail::coarse_now());
  io.sweep.expires_after(period);
  io.sweep.async_wait([&io, period](beast::error_code ec) {
    if (!ec) {
      sweep_deadlines(io, period);
    }
  });
}

// An exception escaping a completion handler unwinds out of run(); it is logged and the context
// runs on, so one bad handler costs its own connection, not the io thread and every connection on
// it. Each turn of the loop is one such exception; run() returns when stop() stops the context.
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
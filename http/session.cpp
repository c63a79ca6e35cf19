// One HTTP connection (see session.hpp). A session reads one request at a time (pipelined
// requests wait in its buffer, so replies keep their order), hands it to the handler, and resumes
// reading only after the reply is written. Its handlers all run on its io thread, so they never
// run concurrently and need no strand. Its timeouts are deadlines that its io thread's sweep
// checks (expire_due_sessions).
#include "http/session.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "http/log.hpp"
#include "http/request_reader.hpp"
#include "http/response_writer.hpp"

namespace seatflow::http::detail {
namespace {

namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr std::size_t kFirstReadBytes = 4096;
// How long a cancelled read may take to complete before its socket is closed outright.
constexpr Deadline kCancelGrace = std::chrono::seconds(1);

}  // namespace

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
    set_idle(Idle::busy);
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

  // Which kind of idle this session is in, and since when (Idle::busy: it may not be closed).
  [[nodiscard]] Idle idle() const { return idle_; }
  [[nodiscard]] Deadline idle_since() const { return idle_since_; }

  // Closed to make room for a new connection (Listener::make_room): a held reply is never written.
  void evict() {
    set_idle(Idle::busy);
    beast::error_code ignored;
    if (hold_timer_) {
      hold_timer_->cancel();
    }
    socket_.close(ignored);
  }

 private:
  void set_idle(Idle idle) {
    if (idle_ != Idle::busy) {
      io_.idle[static_cast<std::size_t>(idle_)].fetch_sub(1, std::memory_order_relaxed);
    }
    if (idle != Idle::busy) {
      io_.idle[static_cast<std::size_t>(idle)].fetch_add(1, std::memory_order_relaxed);
    }
    idle_ = idle;
    idle_since_ = coarse_now();
  }

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
    set_idle(answered_ ? Idle::busy : Idle::silent);
    socket_.async_read_some(buffer_.prepare(kFirstReadBytes),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->on_first_bytes(ec, n);
                            });
  }

  void on_first_bytes(beast::error_code ec, std::size_t n) {
    set_idle(Idle::busy);
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
    set_idle(Idle::held);
    hold_timer_->async_wait(
        [self = shared_from_this(), response = std::move(response)](beast::error_code ec) mutable {
          self->set_idle(Idle::busy);
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
  Idle idle_ = Idle::busy;
  Deadline idle_since_{};
  bool counted_;  // holds one of the peer's places (SEATFLOW_CONNECTIONS_PER_SOURCE_MAX)
  bool refuse_;
  bool answered_ = false;         // a reply was written: the next wait is an idle keep-alive's
  bool reading_request_ = false;  // a request has begun and is being read: its deadline means 408
  bool timed_out_ = false;        // the sweep cut the request being read
  bool head_ = false;             // the request being answered is a HEAD
  bool keep_alive_ = false;
  bool close_after_write_ = false;
};

void start_session(Socket&& socket, IoThread& io, Shared& shared, SourceAddress peer, bool counted,
                   bool refuse) {
  std::make_shared<Session>(std::move(socket), io, shared, peer, counted, refuse)->run();
}

void expire_due_sessions(IoThread& io, Deadline now) {
  std::erase_if(io.sessions, [now](const std::weak_ptr<Session>& weak) {
    const auto session = weak.lock();
    if (!session) {
      return true;
    }
    session->expire_if_due(now);
    return false;
  });
}

void evict_one(IoThread& io) {
  std::shared_ptr<Session> chosen;
  for (const auto& weak : io.sessions) {
    auto session = weak.lock();
    if (!session || session->idle() == Idle::busy) {
      continue;
    }
    if (!chosen || session->idle() < chosen->idle() ||
        (session->idle() == chosen->idle() && session->idle_since() < chosen->idle_since())) {
      chosen = std::move(session);
    }
  }
  if (chosen) {
    chosen->evict();
  }
}

}  // namespace seatflow::http::detail

// The load generator's Asio/Beast client (the only Beast translation unit of seatflow-bench).
// One I/O thread; each connection carries one request at a time and pulls the next delivery from a
// phase-aware dispatcher, so the dispatcher needs no locks.
#include "load/client.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

namespace seatflow::bench {
namespace {

namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kResponseBodyLimit = 1 << 20;
constexpr auto kProgressInterval = std::chrono::milliseconds(250);
constexpr int kProgressWidth = 30;

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::uint64_t count_of(const std::map<int, std::uint64_t>& counts, int status) {
  const auto it = counts.find(status);
  return it == counts.end() ? 0 : it->second;
}

// One delivery of one callback, with its attempt count and the moment it was meant to leave.
struct Job {
  std::uint32_t callback = 0;
  std::uint32_t attempts = 0;
  Clock::time_point intended;  // open loop: the schedule; closed loop: when it was handed out
  bool open_loop = false;
};

class Connection;

class Load {
 public:
  Load(const Plan& plan, const ClientOptions& options, const RequestEncoder& encode);
  LoadResult run();

  enum class Next { job, wait, done };
  // Hands out the next delivery, or tells the connection to wait for the phase to drain.
  Next next(Job& job, const std::shared_ptr<Connection>& conn);
  // A delivery reached its final answer (status 0: gave up after transport errors).
  void complete(const Job& job, int final_status);
  // Records one HTTP answer (or a transport error as status 0).
  void record(int status, Clock::time_point since);
  // The entry of `per_second` for the second of the load `at` falls in (from the first send),
  // the vector grown to hold it.
  template <class T>
  T& at_second(std::vector<T>& per_second, Clock::time_point at) const {
    const auto second = static_cast<std::size_t>(
        std::chrono::duration_cast<std::chrono::seconds>(at - start_).count());
    if (per_second.size() <= second) {
      per_second.resize(second + 1);
    }
    return per_second[second];
  }
  // The bytes of a callback's request, signed again when stale; counts the send.
  [[nodiscard]] std::shared_ptr<const std::string> wire(std::uint32_t callback);
  void connection_lost();

  [[nodiscard]] const ClientOptions& options() const { return options_; }
  [[nodiscard]] bool done() const { return done_; }
  [[nodiscard]] net::io_context& io() { return io_; }
  [[nodiscard]] const tcp::endpoint& endpoint(std::size_t connection) const {
    return endpoints_[connection % endpoints_.size()];
  }
  void count_retry() { ++result_.retries_503; }

 private:
  void advance_phase();
  void wake_parked();
  void finish(std::string reason);
  void schedule_progress();
  void print_progress(bool last);

  net::io_context io_{1};
  const Plan& plan_;
  const ClientOptions& options_;
  const RequestEncoder& encode_;
  std::vector<tcp::endpoint> endpoints_;
  std::vector<std::shared_ptr<Connection>> connections_;
  std::vector<std::shared_ptr<Connection>> parked_;
  std::vector<std::shared_ptr<const std::string>> wire_;
  std::vector<std::int64_t> signed_at_ms_;
  net::steady_timer deadline_{io_};
  net::steady_timer progress_timer_{io_};

  std::size_t phase_ = 0;
  std::size_t pos_ = 0;
  std::size_t outstanding_ = 0;
  Clock::time_point phase_start_;
  bool started_ = false;
  bool done_ = false;
  std::size_t live_connections_ = 0;
  Clock::time_point start_;
  Clock::time_point end_;
  std::uint64_t completed_ = 0;
  std::uint64_t progress_last_completed_ = 0;
  Clock::time_point progress_last_at_;
  LoadResult result_;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Load& load, std::size_t index)
      : load_(load), index_(index), stream_(load.io()), timer_(load.io()) {}

  void start() { connect(); }

  // Called by the dispatcher when a parked connection may pull again.
  void wake() {
    net::post(load_.io(), [self = shared_from_this()] { self->pull(); });
  }

  void stop() {
    note_exchange(0);  // a request cut by the end of the load: sent, never answered
    beast::error_code ignored;
    timer_.cancel();
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

 private:
  void connect() {
    stream_.expires_after(std::chrono::milliseconds(load_.options().connect_timeout_ms));
    if (const auto& source = load_.options().source_address; !source.empty()) {
      // Bound before the connect, which then keeps the socket (and its address) it finds open.
      beast::error_code ec;
      const auto address = net::ip::make_address(source, ec);
      auto& socket = stream_.socket();
      if (!ec && !socket.is_open()) {
        socket.open(address.is_v4() ? tcp::v4() : tcp::v6(), ec);
      }
      if (!ec) {
        socket.bind(tcp::endpoint(address, 0), ec);
      }
      if (ec) {
        transport_failure();
        return;
      }
    }
    stream_.async_connect(
        load_.endpoint(index_),
        [self = shared_from_this()](beast::error_code ec) { self->on_connect(ec); });
  }

  void on_connect(beast::error_code ec) {
    if (load_.done()) {
      return;
    }
    if (ec) {
      transport_failure();
      return;
    }
    stream_.socket().set_option(tcp::no_delay(true), ec);
    consecutive_failures_ = 0;
    if (job_) {
      send();
    } else {
      pull();
    }
  }

  void pull() {
    if (job_) {
      return;  // a wake-up raced with work already taken
    }
    Job job;
    switch (load_.next(job, shared_from_this())) {
      case Load::Next::wait:
        return;
      case Load::Next::done:
        stop();
        return;
      case Load::Next::job:
        break;
    }
    job_ = job;
    if (job.open_loop && job.intended > Clock::now()) {
      timer_.expires_at(job.intended);
      timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
        if (!ec) {
          self->send();
        }
      });
      return;
    }
    send();
  }

  void send() {
    assert(job_);
    ++job_->attempts;
    wire_ = load_.wire(job_->callback);
    // Open loop measures from the schedule (no coordinated omission); closed loop from the send.
    sent_at_ = job_->open_loop && job_->attempts == 1 ? job_->intended : Clock::now();
    sent_wall_ms_ = wall_ms();
    written_ = true;
    stream_.expires_after(std::chrono::milliseconds(load_.options().request_timeout_ms));
    net::async_write(
        stream_, net::buffer(*wire_),
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(beast::error_code ec) {
    if (load_.done()) {
      return;
    }
    if (ec) {
      transport_failure();
      return;
    }
    parser_.emplace();
    parser_->body_limit(kResponseBodyLimit);
    bhttp::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec2, std::size_t) { self->on_read(ec2); });
  }

  void on_read(beast::error_code ec) {
    if (load_.done()) {
      return;
    }
    if (ec) {
      transport_failure();
      return;
    }
    const auto& response = parser_->get();
    const int status = static_cast<int>(response.result_int());
    const bool keep_alive = response.keep_alive();
    load_.record(status, sent_at_);
    note_exchange(status);
    const auto& options = load_.options();
    const bool transient = status == 503 || (options.gateway && status >= 500);
    if (transient && options.retry_503 && job_->attempts < options.max_attempts) {
      load_.count_retry();
      retry_later(keep_alive);
      return;
    }
    load_.complete(*job_, status);
    job_.reset();
    if (load_.done()) {
      return;
    }
    if (!keep_alive) {
      reopen();
      return;
    }
    pull();
  }

  // The delay before the n-th resend: fixed, or in gateway mode doubling up to max_backoff_ms.
  [[nodiscard]] std::chrono::milliseconds backoff(std::uint32_t failures) const {
    const auto& options = load_.options();
    if (!options.gateway || failures <= 1) {
      return std::chrono::milliseconds(options.retry_delay_ms);
    }
    const auto shift = std::min<std::uint32_t>(failures - 1, 16);
    const auto delay = std::min<std::uint64_t>(
        static_cast<std::uint64_t>(options.retry_delay_ms) << shift, options.max_backoff_ms);
    return std::chrono::milliseconds(std::max<std::uint64_t>(delay, options.retry_delay_ms));
  }

  void retry_later(bool keep_alive) {
    timer_.expires_after(backoff(job_->attempts));
    timer_.async_wait([self = shared_from_this(), keep_alive](beast::error_code ec) {
      if (ec) {
        return;
      }
      if (keep_alive) {
        self->send();
      } else {
        self->reopen();
      }
    });
  }

  void reopen() {
    beast::error_code ignored;
    stream_.socket().close(ignored);
    buffer_.consume(buffer_.size());
    connect();
  }

  // Connect, write, read failed or timed out: count it, then reconnect and resend (bounded).
  void transport_failure() {
    load_.record(0, sent_at_);
    note_exchange(0);
    ++consecutive_failures_;
    const auto max_attempts = load_.options().max_attempts;
    if (job_ && job_->attempts >= max_attempts) {
      load_.complete(*job_, 0);
      job_.reset();
    }
    if (load_.done()) {
      return;
    }
    if (consecutive_failures_ >= max_attempts) {
      if (job_) {
        load_.complete(*job_, 0);
        job_.reset();
      }
      stop();
      load_.connection_lost();
      return;
    }
    // A gateway behind several engines resends through the next one (a paused engine's timeouts
    // must not hold its deliveries); with one target this is the same endpoint.
    if (load_.options().gateway) {
      ++index_;
    }
    timer_.expires_after(backoff(consecutive_failures_));
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) {
        self->reopen();
      }
    });
  }

  // The history record of the request in flight, if one was written since the last record.
  void note_exchange(int http) {
    const auto& hook = load_.options().on_exchange;
    if (hook && job_ && written_) {
      hook(job_->callback, sent_wall_ms_, wall_ms(), http);
    }
    written_ = false;
  }

  Load& load_;
  std::size_t index_;
  beast::tcp_stream stream_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::response_parser<bhttp::string_body>> parser_;
  std::optional<Job> job_;
  std::shared_ptr<const std::string> wire_;  // keeps the bytes alive while they are written
  Clock::time_point sent_at_ = Clock::now();
  std::uint32_t consecutive_failures_ = 0;
  std::int64_t sent_wall_ms_ = 0;
  bool written_ = false;  // send() started a request not yet recorded in the history
};

Load::Load(const Plan& plan, const ClientOptions& options, const RequestEncoder& encode)
    : plan_(plan), options_(options), encode_(encode) {
  beast::error_code ec;
  endpoints_.emplace_back(net::ip::make_address(options.host, ec), options.port);
  assert(!ec);
  for (const auto& [host, port] : options.extra_targets) {
    endpoints_.emplace_back(net::ip::make_address(host, ec), port);
    assert(!ec);
  }
}

std::shared_ptr<const std::string> Load::wire(std::uint32_t callback) {
  ++result_.sends_per_callback[callback];
  const auto now = wall_ms();
  if (now - signed_at_ms_[callback] > options_.body_ttl_ms) {
    wire_[callback] = std::make_shared<const std::string>(encode_(callback, now));
    signed_at_ms_[callback] = now;
    ++result_.resigned;
  }
  return wire_[callback];
}

Load::Next Load::next(Job& job, const std::shared_ptr<Connection>& conn) {
  for (;;) {
    if (done_) {
      return Next::done;
    }
    if (!started_) {
      started_ = true;
      start_ = Clock::now();
      phase_start_ = start_;
      progress_last_at_ = start_;
    }
    const auto& phase = plan_.phases[phase_];
    if (pos_ < phase.size()) {
      job.callback = phase[pos_];
      job.attempts = 0;
      job.open_loop = options_.rate_per_s > 0;
      job.intended = job.open_loop
                         ? phase_start_ + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(
                                                  static_cast<double>(pos_) / options_.rate_per_s))
                         : Clock::now();
      ++pos_;
      ++outstanding_;
      return Next::job;
    }
    if (outstanding_ > 0) {
      parked_.push_back(conn);
      return Next::wait;
    }
    advance_phase();
  }
}

void Load::complete(const Job& job, int final_status) {
  if (done_) {
    return;
  }
  assert(outstanding_ > 0);
  --outstanding_;
  ++completed_;
  if (final_status == 200) {
    ++result_.acked;
    ++result_.acks_per_callback[job.callback];
    ++at_second(result_.acks_per_second, Clock::now());
  }
  end_ = Clock::now();
  if (pos_ == plan_.phases[phase_].size() && outstanding_ == 0) {
    advance_phase();
    wake_parked();
  }
}

void Load::record(int status, Clock::time_point since) {
  ++result_.status_counts[status];
  if (status == 0) {
    ++result_.transport_errors;
    return;
  }
  ++result_.exchanges;
  const auto now = Clock::now();
  const auto us = static_cast<std::uint32_t>(std::clamp<std::int64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(now - since).count(), 0, UINT32_MAX));
  result_.latency_us.push_back(us);
  at_second(result_.latency_us_by_second, now).push_back(us);
}

void Load::advance_phase() {
  ++phase_;
  pos_ = 0;
  phase_start_ = Clock::now();
  while (phase_ < plan_.phases.size() && plan_.phases[phase_].empty()) {
    ++phase_;
  }
  if (phase_ >= plan_.phases.size()) {
    result_.finished = true;
    finish({});
  }
}

void Load::wake_parked() {
  auto parked = std::move(parked_);
  parked_.clear();
  for (auto& conn : parked) {
    conn->wake();
  }
}

void Load::connection_lost() {
  assert(live_connections_ > 0);
  if (--live_connections_ == 0 && !done_) {
    finish("every connection failed " + std::to_string(options_.max_attempts) +
           " times in a row; is the target up?");
  }
}

void Load::finish(std::string reason) {
  if (done_) {
    return;
  }
  done_ = true;
  if (!reason.empty()) {
    result_.abort_reason = std::move(reason);
  }
  deadline_.cancel();
  progress_timer_.cancel();
  if (options_.progress) {
    print_progress(true);
  }
  wake_parked();
  for (auto& conn : connections_) {
    conn->stop();
  }
}

void Load::schedule_progress() {
  progress_timer_.expires_after(kProgressInterval);
  progress_timer_.async_wait([this](beast::error_code ec) {
    if (ec || done_) {
      return;
    }
    print_progress(false);
    schedule_progress();
  });
}

void Load::print_progress(bool last) {
  const auto total = result_.planned_requests;
  const auto now = Clock::now();
  const double interval_s = std::chrono::duration<double>(now - progress_last_at_).count();
  const double rate =
      interval_s > 0 ? static_cast<double>(completed_ - progress_last_completed_) / interval_s : 0;
  progress_last_at_ = now;
  progress_last_completed_ = completed_;
  const double fraction =
      total > 0 ? static_cast<double>(completed_) / static_cast<double>(total) : 1;
  const int filled = static_cast<int>(fraction * kProgressWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kProgressWidth, '.');
  const double elapsed = started_ ? std::chrono::duration<double>(now - start_).count() : 0;
  std::fprintf(stderr, "\r[%s] %5.1f%% %llu/%llu %8.0f req/s  503:%llu err:%llu  %6.1f s%s",
               bar.c_str(), fraction * 100, static_cast<unsigned long long>(completed_),
               static_cast<unsigned long long>(total), rate,
               static_cast<unsigned long long>(count_of(result_.status_counts, 503)),
               static_cast<unsigned long long>(result_.transport_errors), elapsed,
               last ? "\n" : "");
  std::fflush(stderr);
}

LoadResult Load::run() {
  result_.planned_requests = plan_.total_requests();
  result_.acks_per_callback.assign(plan_.callbacks.size(), 0);
  result_.sends_per_callback.assign(plan_.callbacks.size(), 0);
  result_.latency_us.reserve(result_.planned_requests + result_.planned_requests / 8);
  // Every body is signed and framed before the clock starts.
  const auto now = wall_ms();
  wire_.reserve(plan_.callbacks.size());
  signed_at_ms_.assign(plan_.callbacks.size(), now);
  for (std::uint32_t cb = 0; cb < plan_.callbacks.size(); ++cb) {
    wire_.push_back(std::make_shared<const std::string>(encode_(cb, now)));
  }
  if (result_.planned_requests == 0) {
    result_.finished = true;
    return std::move(result_);
  }

  deadline_.expires_after(std::chrono::seconds(options_.deadline_s));
  deadline_.async_wait([this](beast::error_code ec) {
    if (!ec) {
      result_.timed_out = true;
      finish("deadline of " + std::to_string(options_.deadline_s) + " s reached");
    }
  });
  if (options_.progress) {
    schedule_progress();
  }
  const auto count =
      std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                     options_.connections, result_.planned_requests)));
  for (std::uint32_t i = 0; i < count; ++i) {
    connections_.push_back(std::make_shared<Connection>(*this, i));
  }
  live_connections_ = connections_.size();
  for (auto& conn : connections_) {
    conn->start();
  }
  io_.run();

  if (!started_) {
    end_ = start_ = Clock::now();
  }
  result_.elapsed_s = std::chrono::duration<double>(end_ - start_).count();
  result_.unacked = result_.planned_requests - result_.acked;
  std::sort(result_.latency_us.begin(), result_.latency_us.end());
  for (auto& second : result_.latency_us_by_second) {
    std::sort(second.begin(), second.end());
  }
  parked_.clear();
  connections_.clear();
  return std::move(result_);
}

}  // namespace

LoadResult run_load(const Plan& plan, const ClientOptions& options, const RequestEncoder& encode) {
  Load load(plan, options, encode);
  return load.run();
}

}  // namespace seatflow::bench

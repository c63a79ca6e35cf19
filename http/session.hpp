// One HTTP connection of the Beast server (http/server.cpp): the io thread that owns it, what
// all sessions share (the settings, the handler, the connection table), and the calls the
// listener and the io threads' sweep make on sessions. The Session class itself is private to
// http/session.cpp.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <time.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "http/config.hpp"
#include "http/connections.hpp"
#include "http/probe.hpp"
#include "http/source.hpp"
#include "http/types.hpp"

namespace seatflow::http::detail {

using Executor = boost::asio::io_context::executor_type;
using Socket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, Executor>;

// Deadlines are read from CLOCK_MONOTONIC_COARSE: a few ns from the vDSO, at the kernel tick's
// resolution (1-4 ms), ample for timeouts of 100 ms and more (SEATFLOW_READ_TIMEOUT_MS' minimum).
using Deadline = std::chrono::nanoseconds;
inline constexpr Deadline kNoDeadline = Deadline::max();

inline Deadline coarse_now() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

class Session;

// What a session is waiting for when it could be closed to make room for a new connection, in
// the order they are closed: a 429 held for a flooding source, a new connection that has sent
// nothing yet. `busy` (reading, answering, writing, or an idle keep-alive connection that was
// answered) is never closed for room.
enum class Idle : std::uint8_t { held, silent, busy };
inline constexpr std::size_t kIdleKinds = static_cast<std::size_t>(Idle::busy);

// One io thread: its io_context, the sessions accepted onto it, and the sweep that closes those
// whose deadline has passed. A timer per read and write (Beast's basic_stream arms, cancels and
// dispatches one for each) cost ~14 % of a storm duplicate's CPU; a deadline costs a store.
struct IoThread {
  // Its sessions that may be closed to make room, by Idle kind, read by the listener's thread;
  // first, so that it outlives the sessions the context's handlers still hold when it is destroyed.
  std::array<std::atomic<std::size_t>, kIdleKinds> idle{};
  boost::asio::io_context context{1};  // one thread runs it
  boost::asio::steady_timer sweep{context};
  std::vector<std::weak_ptr<Session>> sessions;  // touched on this thread only
};

struct Shared {
  HttpConfig config;
  RequestHandler& handler;
  HttpProbe& probe;
  std::atomic<std::size_t> connections{0};
  SourceConnections per_source{};
  // Set by stop_accepting(): a request read from now on is answered 503 and its connection
  // closed, so nothing reaches the engine while it flushes and stops.
  std::atomic<bool> draining{false};
  // Sessions the listener asked an io thread to close for room and not yet closed: a full table
  // accepts a new connection only while more sessions are evictable than this.
  std::atomic<std::size_t> evictions_pending{0};
};

// Starts a session on `io` for an accepted connection from `peer`. `counted`: it holds one of its
// source's places (given back at its end); `refuse`: it is answered 503 and closed at once.
void start_session(Socket&& socket, IoThread& io, Shared& shared, SourceAddress peer, bool counted,
                   bool refuse);
// Closes the sessions of `io` whose deadline is past `now` (a request being read is answered 408)
// and forgets those gone. On `io`'s thread.
void expire_due_sessions(IoThread& io, Deadline now);
// Closes the session of `io` that is first in Idle's order and, within its kind, idle longest, to
// make room for a new connection; none when every session is busy. On `io`'s thread.
void evict_one(IoThread& io);

}  // namespace seatflow::http::detail

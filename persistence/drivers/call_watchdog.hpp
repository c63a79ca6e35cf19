// Client-side deadlines for blocking store calls: a watchdog thread shuts a connection's socket
// down when the call on it outlives its deadline, so libpq and hiredis return even when the peer's
// kernel still acknowledges (a frozen server) and nothing else would ever time out.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>

namespace seatflow::persistence {

// The socket of one store connection, as the watchdog may cut it. It holds a duplicate of the
// client library's descriptor: the library may close its own at any moment (libpq does on EOF),
// and the number could then be reused by an unrelated socket; the duplicate is closed only here,
// under the lock the watchdog cuts under, so a cut always reaches this connection's socket.
class WatchedSocket {
 public:
  WatchedSocket() = default;
  ~WatchedSocket();
  WatchedSocket(const WatchedSocket&) = delete;
  WatchedSocket& operator=(const WatchedSocket&) = delete;

  // Watches `fd` (the library's descriptor, duplicated here) from now on; when the current call's
  // deadline has already passed, the new socket is cut at once.
  void watch(int fd);
  // Stops watching and closes the duplicate; call when the library closes (or closed) its own.
  void forget();
  // The current call starts: not expired.
  void begin_call();
  // The current call's deadline passed: shutdown(SHUT_RDWR) of the socket, so a blocked read or
  // write on it returns at once, and expired() until the next call begins.
  void expire();
  [[nodiscard]] bool expired();
  // The watched socket was shut down (by expire()): it is dead even when no call was using it at
  // the time, so the client reconnects before its next command. Until watch() or forget().
  [[nodiscard]] bool cut();

 private:
  std::mutex mutex_;
  int dup_fd_ = -1;
  bool expired_ = false;
  bool cut_ = false;
};

// One thread for every store connection of a process. A call arms it with a deadline and the
// socket it uses; past the deadline the socket is cut. abort_all() cuts every armed call now and
// makes every later call fail at once (graceful stop).
class CallWatchdog {
 public:
  using Clock = std::chrono::steady_clock;
  using Ticket = std::uint64_t;

  CallWatchdog();
  ~CallWatchdog();
  CallWatchdog(const CallWatchdog&) = delete;
  CallWatchdog& operator=(const CallWatchdog&) = delete;

  // Cuts `socket` at `deadline` unless disarmed before; the socket must outlive the disarm.
  [[nodiscard]] Ticket arm(Clock::time_point deadline, WatchedSocket* socket);
  // After it returns the ticket's socket is never cut by it (cuts happen under the same lock).
  void disarm(Ticket ticket);
  void abort_all();
  [[nodiscard]] bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  // Calls cut because their deadline passed (aborts not included).
  [[nodiscard]] std::uint64_t deadline_cuts() const {
    return deadline_cuts_.load(std::memory_order_relaxed);
  }

 private:
  struct Armed {
    Clock::time_point deadline;
    WatchedSocket* socket;
  };
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<Ticket, Armed> armed_;
  Ticket next_ = 1;
  bool stopping_ = false;
  std::atomic<bool> aborted_{false};
  std::atomic<std::uint64_t> deadline_cuts_{0};
  std::thread thread_;
};

// Arms a watchdog for one call on one socket for the scope's lifetime (RAII).
class [[nodiscard]] CallScope {
 public:
  CallScope(CallWatchdog& watchdog, CallWatchdog::Clock::time_point deadline, WatchedSocket& socket)
      : watchdog_(&watchdog), ticket_(watchdog.arm(deadline, &socket)) {}
  ~CallScope() {
    if (watchdog_ != nullptr) {
      watchdog_->disarm(ticket_);
    }
  }
  CallScope(CallScope&& other) noexcept : watchdog_(other.watchdog_), ticket_(other.ticket_) {
    other.watchdog_ = nullptr;
  }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
  CallScope& operator=(CallScope&&) = delete;

 private:
  CallWatchdog* watchdog_;
  CallWatchdog::Ticket ticket_;
};

}  // namespace seatflow::persistence

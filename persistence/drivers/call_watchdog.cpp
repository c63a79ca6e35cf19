// The watchdog thread: sleeps until the earliest armed deadline and cuts the sockets it passed.
#include "persistence/drivers/call_watchdog.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>

namespace seatflow::persistence {

WatchedSocket::~WatchedSocket() {
  forget();
}

void WatchedSocket::watch(int fd) {
  const int copy = fd >= 0 ? ::dup(fd) : -1;
  std::lock_guard lock(mutex_);
  if (dup_fd_ >= 0) {
    ::close(dup_fd_);
  }
  dup_fd_ = copy;
  cut_ = expired_ && dup_fd_ >= 0;
  if (cut_) {
    ::shutdown(dup_fd_, SHUT_RDWR);
  }
}

void WatchedSocket::forget() {
  std::lock_guard lock(mutex_);
  if (dup_fd_ >= 0) {
    ::close(dup_fd_);
    dup_fd_ = -1;
  }
  cut_ = false;
}

void WatchedSocket::begin_call() {
  std::lock_guard lock(mutex_);
  expired_ = false;
}

void WatchedSocket::expire() {
  std::lock_guard lock(mutex_);
  expired_ = true;
  if (dup_fd_ >= 0) {
    ::shutdown(dup_fd_, SHUT_RDWR);
    cut_ = true;
  }
}

bool WatchedSocket::expired() {
  std::lock_guard lock(mutex_);
  return expired_;
}

bool WatchedSocket::cut() {
  std::lock_guard lock(mutex_);
  return cut_;
}

CallWatchdog::CallWatchdog() : thread_([this] { run(); }) {}

CallWatchdog::~CallWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

CallWatchdog::Ticket CallWatchdog::arm(Clock::time_point deadline, WatchedSocket* socket) {
  assert(socket != nullptr);
  std::lock_guard lock(mutex_);
  const Ticket ticket = next_++;
  if (aborted_.load(std::memory_order_relaxed)) {
    socket->expire();
    return ticket;
  }
  socket->begin_call();
  const bool earliest = armed_.empty() || std::all_of(armed_.begin(), armed_.end(), [&](auto& a) {
                          return deadline < a.second.deadline;
                        });
  armed_.emplace(ticket, Armed{deadline, socket});
  if (earliest) {
    wake_.notify_one();
  }
  return ticket;
}

void CallWatchdog::disarm(Ticket ticket) {
  std::lock_guard lock(mutex_);
  armed_.erase(ticket);
}

void CallWatchdog::abort_all() {
  std::lock_guard lock(mutex_);
  aborted_.store(true, std::memory_order_release);
  for (auto& [ticket, armed] : armed_) {
    armed.socket->expire();
  }
  armed_.clear();
}

void CallWatchdog::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const auto now = Clock::now();
    auto next = Clock::time_point::max();
    for (auto it = armed_.begin(); it != armed_.end();) {
      if (it->second.deadline <= now) {
        it->second.socket->expire();
        deadline_cuts_.fetch_add(1, std::memory_order_relaxed);
        it = armed_.erase(it);
      } else {
        next = std::min(next, it->second.deadline);
        ++it;
      }
    }
    if (next == Clock::time_point::max()) {
      wake_.wait(lock);
    } else {
      wake_.wait_until(lock, next);
    }
  }
}

}  // namespace seatflow::persistence

// A libpq command under a deadline: PQsendQuery, then PQconsumeInput as the socket becomes
// readable, never a blocking read.
#include "persistence/drivers/pq_command.hpp"

#include <poll.h>

#include <algorithm>
#include <cstdint>

namespace seatflow::persistence {

bool wait_socket(int sock, bool for_write, std::chrono::milliseconds wait) {
  pollfd fd{sock, static_cast<short>(for_write ? POLLOUT : POLLIN), 0};
  const int rc = ::poll(&fd, 1, static_cast<int>(std::max<std::int64_t>(0, wait.count())));
  return rc >= 0;
}

namespace {

using Clock = std::chrono::steady_clock;

// Waits until the connection has a whole result to give (PQisBusy false) or `deadline` passed;
// false on a timeout or a failed read.
bool wait_result(PGconn* conn, Clock::time_point deadline, bool& timed_out) {
  while (PQisBusy(conn) != 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      return false;
    }
    if (!wait_socket(PQsocket(conn), false, left) || PQconsumeInput(conn) == 0) {
      return false;
    }
  }
  return true;
}

bool starts_copy(ExecStatusType status) {
  return status == PGRES_COPY_BOTH || status == PGRES_COPY_IN || status == PGRES_COPY_OUT;
}

}  // namespace

PqCommandResult pq_command(PGconn* conn, const char* command, Clock::time_point deadline) {
  PqCommandResult out;
  if (conn == nullptr || PQsendQuery(conn, command) != 1 || PQflush(conn) != 0) {
    return out;
  }
  if (!wait_result(conn, deadline, out.timed_out)) {
    return out;
  }
  PqResult first(PQgetResult(conn));
  if (first == nullptr || starts_copy(PQresultStatus(first.get()))) {
    out.result = std::move(first);
    return out;
  }
  // The command is complete once PQgetResult gives null.
  for (;;) {
    if (!wait_result(conn, deadline, out.timed_out)) {
      return out;
    }
    const PqResult rest(PQgetResult(conn));
    if (rest == nullptr) {
      break;
    }
  }
  out.result = std::move(first);
  return out;
}

}  // namespace seatflow::persistence

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

// Waits until the connection has a whole result to give (PQisBusy false) or `deadline` passed.
Result<void> wait_result(PGconn* conn, Clock::time_point deadline) {
  while (PQisBusy(conn) != 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return refused(errc::deadline_exceeded, "no answer before the call deadline");
    }
    if (!wait_socket(PQsocket(conn), false, left) || PQconsumeInput(conn) == 0) {
      return refused(errc::pg_unavailable, "the connection failed while waiting for the answer");
    }
  }
  return {};
}

bool starts_copy(ExecStatusType status) {
  return status == PGRES_COPY_BOTH || status == PGRES_COPY_IN || status == PGRES_COPY_OUT;
}

}  // namespace

Result<PqResult> pq_command(PGconn* conn, const char* command, Clock::time_point deadline) {
  if (conn == nullptr || PQsendQuery(conn, command) != 1 || PQflush(conn) != 0) {
    return refused(errc::pg_unavailable, "the command could not be sent");
  }
  if (auto waited = wait_result(conn, deadline); !waited.ok()) {
    return std::move(waited).failure();
  }
  PqResult first(PQgetResult(conn));
  if (first == nullptr) {
    return refused(errc::pg_unavailable, "the connection gave no result");
  }
  if (starts_copy(PQresultStatus(first.get()))) {
    return first;
  }
  // The command is complete once PQgetResult gives null.
  for (;;) {
    if (auto waited = wait_result(conn, deadline); !waited.ok()) {
      return std::move(waited).failure();
    }
    const PqResult rest(PQgetResult(conn));
    if (rest == nullptr) {
      break;
    }
  }
  return first;
}

}  // namespace seatflow::persistence

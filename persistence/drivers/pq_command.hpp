// Raw libpq connections and one command on them, answered before a deadline or abandoned. The
// relay's replication connection speaks through libpq directly (SET, IDENTIFY_SYSTEM,
// START_REPLICATION), outside the call watchdog's scopes: a server that accepted the connection and
// then froze would otherwise hold a blocking PQexec for as long as it stays frozen (its kernel
// still acknowledges, so neither TCP keepalives nor tcp_user_timeout end the wait).
#pragma once

#include <chrono>
#include <memory>

#include <libpq-fe.h>

#include "persistence/drivers/errc.hpp"

namespace seatflow::persistence {

struct PqConnCloser {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
using PqConn = std::unique_ptr<PGconn, PqConnCloser>;

struct PqResultCloser {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PqResult = std::unique_ptr<PGresult, PqResultCloser>;

// Waits until `sock` is readable (or writable) or `wait` passed; false on a poll error.
bool wait_socket(int sock, bool for_write, std::chrono::milliseconds wait);

// Sends `command` and waits (poll on the socket) until its first result arrived or `deadline`
// passed. A result that starts a COPY (START_REPLICATION's COPY BOTH) is returned at once, the
// connection then in copy mode; any other result is returned once the command is complete (the
// connection ready for the next command), still bounded by the same deadline. An error the server
// answered is a result (its status says so). The failures: errc::deadline_exceeded when the
// deadline passed first (the connection is mid-command and only fit to be closed) and
// errc::pg_unavailable when the connection failed (the detail says where; PQerrorMessage says why).
[[nodiscard]] Result<PqResult> pq_command(PGconn* conn, const char* command,
                                          std::chrono::steady_clock::time_point deadline);

}  // namespace seatflow::persistence

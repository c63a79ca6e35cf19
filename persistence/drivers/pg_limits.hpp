// The limits of every PostgreSQL connection (connect, TCP, session and client-side call
// deadlines), each defined once here, and the pure functions that put them into a DSN and a
// session.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace seatflow::persistence {

// Each limit has one SEATFLOW_PG_* setting (app/config.cpp) and one README row.
struct PgLimits {
  // libpq connect_timeout (SEATFLOW_PG_CONNECT_TIMEOUT_MS), sent in whole seconds rounded up;
  // libpq treats less than 2 s as 2 s.
  std::uint32_t connect_ms_max = 3'000;
  // TCP keepalives: a dead peer or a lost path is noticed on an idle connection.
  std::uint32_t keepalive_idle_s = 10;
  std::uint32_t keepalive_interval_s = 3;
  std::uint32_t keepalive_probes_max = 3;
  // libpq tcp_user_timeout: sent data unacknowledged this long breaks the connection (a
  // black-holed path; a frozen server's kernel still acknowledges, see call_ms_max).
  std::uint32_t tcp_unacked_ms_max = 10'000;
  // Per session: server-side bounds of one statement, of one lock wait, and of a transaction left
  // open by a client that stopped talking (row locks are held across the Redis call).
  std::uint32_t statement_ms_max = 5'000;
  std::uint32_t lock_wait_ms_max = 3'000;
  std::uint32_t idle_in_transaction_ms_max = 10'000;
  // Client-side deadline of one unit of work (a transaction with its Redis calls): past it the
  // watchdog shuts the socket down. It holds when the server cannot enforce its own timeouts
  // (frozen, or the path lost), so it is longer than the statement timeout.
  std::uint32_t call_ms_max = 6'000;
  // How long a session keeps its cached plans (SEATFLOW_PG_PLAN_REFRESH_MS; 0: until PostgreSQL
  // invalidates them). A generic plan is made once, on the tables as they were then, and a bulk
  // load without ANALYZE invalidates nothing: a plan made on empty tables (the warm-up's, or a new
  // deployment's first batches) then scans whole tables until autovacuum analyses them, which it
  // may never do. Past this age the next unit of work drops them (DISCARD PLANS), so each
  // statement is planned again on the tables as they are.
  std::uint32_t plan_refresh_ms = 1'000;
  // PostgreSQL's client_connection_check_interval (PostgreSQL 14 and later; 0: not set): while a
  // statement runs, the server looks this often whether the client is still there and cancels
  // the statement when it is gone. The bill run's session sets it, so a stopped or killed engine
  // leaves no long statement running behind it.
  std::uint32_t connection_check_ms = 0;
};

// The DSN with the connection limits and target_session_attrs=read-write added for every
// parameter the DSN does not set itself (a URI's query or key=value pairs).
[[nodiscard]] std::string with_connection_defaults(std::string_view dsn, const PgLimits& limits);

// Whether a DSN (URI or key=value form) sets parameter `key`.
[[nodiscard]] bool dsn_has_parameter(std::string_view dsn, std::string_view key);

// The statements that give a new session its timeouts, synchronous_commit and application name.
[[nodiscard]] std::string session_setup_sql(const PgLimits& limits);

}  // namespace seatflow::persistence

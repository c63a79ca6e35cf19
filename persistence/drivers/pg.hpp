// A PostgreSQL connection owned by one detached actor: connect, prepare, classify errors.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

#include "persistence/drivers/call_watchdog.hpp"
#include "persistence/drivers/failpoints.hpp"
#include "persistence/drivers/pg_limits.hpp"

namespace seatflow::persistence {

// How a database error should be answered: retry later (503) or never (4xx/500).
enum class PgErrorClass : std::uint8_t { retryable, unique_violation, permanent };

// The SQLSTATE of seatflow_emit_events (migrations 11 and 12): the slot that would decode a move's
// event is missing, invalidated or still being created, so the move was refused. Retryable: the
// engine answers 503 until the slot exists again (the running relay makes a missing one at once;
// `seatflow migrate` and an engine start do too).
inline constexpr std::string_view kSqlStateEventSlotUnusable = "SF001";

// A PostgreSQL array literal with every element quoted and escaped (libpqxx 6.4 has no array
// parameters): pass it as $n and cast with ::text[].
[[nodiscard]] std::string to_pg_array(const std::vector<std::string>& items);
// The same for whole numbers (cast with ::int[] / ::smallint[] / ::bigint[]).
[[nodiscard]] std::string to_pg_array(const std::vector<std::int64_t>& items);

// The strings of a JSON array of strings (a seat list as the statements return it, json_agg or
// to_json of a text[]); throws on anything else.
[[nodiscard]] std::vector<std::string> json_strings(std::string_view json);
[[nodiscard]] std::vector<std::string> json_strings(const pqxx::field& field);

// A nullable column's value: nullopt for SQL NULL.
template <class T>
[[nodiscard]] std::optional<T> optional_of(const pqxx::field& field) {
  return field.is_null() ? std::nullopt : std::optional<T>(field.as<T>());
}

// Classifies an exception thrown by libpqxx at the persistence border.
[[nodiscard]] PgErrorClass classify(const std::exception& error);

// Whether the connection that threw `error` must be dropped and made again: it broke (class 08,
// a broken connection, a watchdog cut, an unknown commit outcome), the server is going away
// (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now), or it became read-only
// (25006: a standby, or default_transaction_read_only) and a new connection with
// target_session_attrs=read-write finds the writable server.
[[nodiscard]] bool needs_reset(const std::exception& error);

// What the readiness prober learnt from one PostgreSQL session.
struct PgPrimaryState {
  bool in_recovery = false;  // pg_is_in_recovery(): a standby
  bool read_only = false;    // transaction_read_only (default_transaction_read_only included)
};

// SELECT pg_is_in_recovery() and SHOW transaction_read_only in one round trip; throws like any
// statement.
[[nodiscard]] PgPrimaryState read_primary_state(pqxx::connection& conn);

class PgSession {
 public:
  using Clock = CallWatchdog::Clock;
  // Run on every new connection after the session setup, e.g. to prepare the statements the
  // stores execute (persistence/stores/sql.hpp's prepare_statements): the driver knows no store.
  using ConnectionSetup = void (*)(pqxx::connection&);

  // Default limits with this statement timeout, and a watchdog of its own (tests and tools).
  PgSession(std::string dsn, std::uint32_t statement_timeout_ms, Failpoints* failpoints,
            ConnectionSetup setup = nullptr);
  // `watchdog` is shared by every connection of an engine (abort_all at stop); null: its own.
  PgSession(std::string dsn, const PgLimits& limits, Failpoints* failpoints,
            std::shared_ptr<CallWatchdog> watchdog, ConnectionSetup setup = nullptr);
  ~PgSession();
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;

  // Arms the client-side deadline for one unit of work on this connection (its connection(),
  // statements and commit): past `deadline` the socket is shut down, the blocked call throws
  // pqxx::broken_connection, and connection() refuses to reconnect until the scope ends.
  [[nodiscard]] CallScope watch_call(Clock::time_point deadline);
  // The same with the deadline now + call_ms_max.
  [[nodiscard]] CallScope watch_call();
  [[nodiscard]] const PgLimits& limits() const { return limits_; }
  // The connection string with the connection defaults (keepalives, timeouts) added.
  [[nodiscard]] const std::string& dsn() const { return dsn_; }

  // The open connection, (re)connecting and preparing statements first; throws
  // pqxx::broken_connection when the server cannot be reached (connect_timeout bounds a connect),
  // when the current call's deadline has passed, or once the watchdog was aborted (stop).
  [[nodiscard]] pqxx::connection& connection();
  // Drops the connection so the next call reconnects (after a broken connection).
  void reset();
  // After a statement threw `error`: drops the connection when needs_reset(error) or it is no
  // longer open (so the next call reconnects); returns whether it did.
  bool reset_if_broken(const std::exception& error);
  [[nodiscard]] bool connected() const;
  // Drops the session's cached plans (DISCARD PLANS, in `tx`) when they are older than
  // limits().plan_refresh_ms; the next execution of each statement plans it again. Call at the
  // start of a unit of work, with its transaction; returns whether it did.
  bool refresh_plans_if_due(pqxx::transaction_base& tx);
  [[nodiscard]] Failpoints* failpoints() const { return failpoints_; }

 private:
  std::string dsn_;  // with the connection defaults added
  PgLimits limits_;
  Failpoints* failpoints_;
  ConnectionSetup setup_;
  std::shared_ptr<CallWatchdog> watchdog_;
  WatchedSocket socket_;
  std::unique_ptr<pqxx::connection> conn_;
  Clock::time_point plans_made_at_{};  // when the connection was made, or its plans last dropped
};

}  // namespace seatflow::persistence

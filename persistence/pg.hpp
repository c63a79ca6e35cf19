// A PostgreSQL connection owned by one detached actor: connect, prepare, classify errors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "persistence/failpoints.hpp"

namespace seatflow::persistence {

// How a database error should be answered: retry later (503) or never (4xx/500).
enum class PgErrorClass : std::uint8_t { retryable, unique_violation, permanent };

// A PostgreSQL array literal with every element quoted and escaped (libpqxx 6.4 has no array
// parameters): pass it as $n and cast with ::text[].
[[nodiscard]] std::string to_pg_array(const std::vector<std::string>& items);
// The same for whole numbers (cast with ::int[] / ::smallint[] / ::bigint[]).
[[nodiscard]] std::string to_pg_array(const std::vector<std::int64_t>& items);

// Classifies an exception thrown by libpqxx at the persistence border.
[[nodiscard]] PgErrorClass classify(const std::exception& error);

class PgSession {
 public:
  PgSession(std::string dsn, std::uint32_t statement_timeout_ms, Failpoints* failpoints);

  // The open connection, (re)connecting and preparing statements first; throws
  // pqxx::broken_connection when the server cannot be reached.
  [[nodiscard]] pqxx::connection& connection();
  // Drops the connection so the next call reconnects (after a broken connection).
  void reset();
  // After a statement threw `error`: drops the connection when it broke (so the next call
  // reconnects); returns whether it did.
  bool reset_if_broken(const std::exception& error);
  [[nodiscard]] bool connected() const;
  [[nodiscard]] Failpoints* failpoints() const { return failpoints_; }

 private:
  std::string dsn_;
  std::uint32_t statement_timeout_ms_;
  Failpoints* failpoints_;
  std::unique_ptr<pqxx::connection> conn_;
};

}  // namespace seatflow::persistence

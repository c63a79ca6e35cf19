// Versioned, idempotent schema migrations (SPEC §2), applied by `seatflow migrate`.
#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

namespace seatflow::persistence {

struct Migration {
  int version;
  std::string_view name;
  std::string_view sql;
  // Optional: one query, run in the migration's transaction after `sql`, whose one text value says
  // what the migration found (e.g. how many rows a backfill took); empty for none.
  std::string_view report_sql;
};

// Every migration, in strictly increasing version order (gaps allowed: versions need only
// increase).
[[nodiscard]] const std::vector<Migration>& migrations();

struct MigrationReport {
  int from_version = 0;
  int to_version = 0;
  std::vector<int> applied;
  std::vector<std::string> notes;  // the report_sql answers of the migrations applied, in order
};

// Applies every migration whose version is not yet recorded (up to `up_to_version`), each in its
// own transaction, under an advisory lock so that several engines starting at once apply each
// migration exactly once.
[[nodiscard]] MigrationReport apply_migrations(pqxx::connection& conn,
                                               int up_to_version = std::numeric_limits<int>::max());

}  // namespace seatflow::persistence

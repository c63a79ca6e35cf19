// Versioned, idempotent schema migrations (SPEC §2), applied by `seatflow migrate`.
#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

#include "persistence/drivers/errc.hpp"

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

// A migration's text with each state written as the domain's value: `{{order.paid}}` → 1,
// `{{payment.pending}}` → 0, `{{refund.succeeded}}` → 'succeeded', `{{bill_run.running}}` →
// 'running' (domain/types.hpp, domain/records.hpp). No state is a literal in a .sql file
// (tests/unit/status_sql_test.cpp scans them); a name the domain does not have is errc::conflict.
// An applied migration's rendered text never changes: a state's value is its stored code or name,
// which the domain never renumbers or renames.
[[nodiscard]] Result<std::string> render_migration(std::string_view text);

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

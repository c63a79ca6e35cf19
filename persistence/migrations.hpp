// Versioned, idempotent schema migrations (SPEC §2), applied by `seatflow migrate`.
#pragma once

#include <string_view>
#include <vector>

#include <pqxx/pqxx>

namespace seatflow::persistence {

struct Migration {
  int version;
  std::string_view name;
  std::string_view sql;
};

// Every migration, in strictly increasing version order (gaps allowed: versions need only
// increase).
[[nodiscard]] const std::vector<Migration>& migrations();

struct MigrationReport {
  int from_version = 0;
  int to_version = 0;
  std::vector<int> applied;
};

// Applies every migration whose version is not yet recorded, each in its own transaction, under an
// advisory lock so that several engines starting at once apply each migration exactly once.
[[nodiscard]] MigrationReport apply_migrations(pqxx::connection& conn);

}  // namespace seatflow::persistence

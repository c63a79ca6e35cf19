// Applying the migrations. The schema itself is persistence/migrations/NNNN_*.sql, one file per
// version, embedded at build time (cmake/embed_migrations.cmake); never edit an applied migration,
// add a new one.
#include "persistence/stores/migrations.hpp"

#include <string>

namespace seatflow::persistence {
namespace {

// An arbitrary constant that names SeatFlow's migration lock.
constexpr long long kMigrationLockKey = 0x5EA7F10;

}  // namespace

MigrationReport apply_migrations(pqxx::connection& conn, int up_to_version) {
  MigrationReport report;
  {
    // The lock comes first: CREATE TABLE IF NOT EXISTS alone races with itself across sessions.
    pqxx::work tx(conn);
    tx.exec("SELECT pg_advisory_xact_lock(" + std::to_string(kMigrationLockKey) + ")");
    tx.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "  version INT PRIMARY KEY, name TEXT NOT NULL,"
        "  applied_at TIMESTAMPTZ NOT NULL DEFAULT now())");
    tx.commit();
  }
  for (const auto& migration : migrations()) {
    pqxx::work tx(conn);
    tx.exec("SELECT pg_advisory_xact_lock(" + std::to_string(kMigrationLockKey) + ")");
    const auto current =
        tx.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0].as<int>();
    if (report.applied.empty()) {
      report.from_version = current;
    }
    report.to_version = std::max(current, report.to_version);
    if (migration.version > up_to_version) {
      continue;
    }
    // Each version is looked up by itself, not compared with the highest applied one: a version
    // merged in below one already applied (3 after 4) is still applied, once.
    const bool applied =
        tx.exec_params1("SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)",
                        migration.version)[0]
            .as<bool>();
    if (applied) {
      continue;
    }
    tx.exec(std::string(migration.sql));
    if (!migration.report_sql.empty()) {
      report.notes.push_back("version " + std::to_string(migration.version) + ": " +
                             tx.exec1(std::string(migration.report_sql))[0].as<std::string>());
    }
    tx.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                   migration.version, std::string(migration.name));
    tx.commit();
    report.applied.push_back(migration.version);
    report.to_version = std::max(report.to_version, migration.version);
  }
  return report;
}

}  // namespace seatflow::persistence

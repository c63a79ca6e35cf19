// Applying the migrations. The schema itself is persistence/migrations/NNNN_*.sql, one file per
// version, embedded at build time (cmake/embed_migrations.cmake); never edit an applied migration,
// add a new one.
#include "persistence/stores/migrations.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <utility>

#include "persistence/stores/status_sql.hpp"

namespace seatflow::persistence {
namespace {

// An arbitrary constant that names SeatFlow's migration lock.
constexpr long long kMigrationLockKey = 0x5EA7F10;

// Every name a migration may write, with its SQL value.
std::vector<std::pair<std::string, std::string>> placeholders() {
  using domain::BillRunState;
  using domain::OrderStatus;
  using domain::PaymentStatus;
  using domain::RefundStatus;
  const std::array<std::pair<const char*, PaymentStatus>, 5> payments = {{
      {"pending", PaymentStatus::pending},
      {"success", PaymentStatus::success},
      {"failed", PaymentStatus::failed},
      {"closed", PaymentStatus::closed},
      {"refunded", PaymentStatus::refunded},
  }};
  const std::array<std::pair<const char*, OrderStatus>, 5> orders = {{
      {"pending", OrderStatus::pending},
      {"paid", OrderStatus::paid},
      {"cancelled", OrderStatus::cancelled},
      {"refunded", OrderStatus::refunded},
      {"partially_refunded", OrderStatus::partially_refunded},
  }};
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, status] : payments) {
    out.emplace_back(std::string("payment.") + name, status_sql::literal(status));
  }
  for (const auto& [name, status] : orders) {
    out.emplace_back(std::string("order.") + name, status_sql::literal(status));
  }
  // refund.<name> is the quoted name discrepancy_refund.status stored (migrations 7 and 17);
  // refund_status.<name> the code refund.status stores (SPEC §2, migration 17 on).
  for (const auto status : domain::kRefundStatuses) {
    const std::string name(domain::to_string(status));
    out.emplace_back("refund." + name, status_sql::named(status));
    out.emplace_back("refund_status." + name, status_sql::literal(status));
  }
  for (const auto state : domain::kBillRunStates) {
    out.emplace_back("bill_run." + std::string(domain::to_string(state)), status_sql::named(state));
  }
  return out;
}

// A migration's rendered text; a name the domain lacks is a build that cannot migrate: thrown, as
// every failure of apply_migrations is (its callers report and exit).
std::string rendered(std::string_view text) {
  auto sql = render_migration(text);
  if (!sql.ok()) {
    throw std::logic_error(sql.detail());
  }
  return std::move(sql).value();
}

}  // namespace

Result<std::string> render_migration(std::string_view text) {
  static const auto names = placeholders();
  std::string out;
  out.reserve(text.size());
  for (;;) {
    const auto open = text.find("{{");
    if (open == std::string_view::npos) {
      out.append(text);
      return out;
    }
    const auto close = text.find("}}", open);
    if (close == std::string_view::npos) {
      return refused(errc::conflict, "an unterminated {{ in a migration");
    }
    const auto name = text.substr(open + 2, close - open - 2);
    const auto it = std::find_if(names.begin(), names.end(),
                                 [&](const auto& entry) { return entry.first == name; });
    if (it == names.end()) {
      return refused(errc::conflict,
                     "a migration names no state of the domain: " + std::string(name));
    }
    out.append(text.substr(0, open));
    out.append(it->second);
    text.remove_prefix(close + 2);
  }
}

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
    tx.exec(rendered(migration.sql));
    if (!migration.report_sql.empty()) {
      report.notes.push_back("version " + std::to_string(migration.version) + ": " +
                             tx.exec1(rendered(migration.report_sql))[0].as<std::string>());
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

// `seatflow reconcile` and `seatflow check`: the seat hashes repaired from PostgreSQL, and the
// PostgreSQL/Redis invariants verified.
#include <pqxx/pqxx>

#include <csignal>
#include <cstdint>
#include <ctime>
#include <iostream>

#include "app/cli.hpp"
#include "observability/logger.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/drivers/pg_limits.hpp"
#include "persistence/jobs/checker.hpp"
#include "persistence/jobs/reconciler.hpp"
#include "persistence/stores/sql.hpp"

namespace seatflow::app {
namespace {

void print_reconcile(const persistence::ReconcileStats& stats) {
  std::cout << "reconcile: orders_scanned=" << stats.orders_scanned
            << " orders_repaired=" << stats.orders_repaired << " seats_sold=" << stats.seats_sold
            << " seats_released=" << stats.seats_released
            << " seats_relocked=" << stats.seats_relocked
            << " seat_conflicts=" << stats.seat_conflicts
            << " pending_conflicts=" << stats.pending_conflicts << " errors=" << stats.errors
            << '\n'
            << std::flush;
}

}  // namespace

int cli_reconcile(const CliOverrides& overrides, const RepairOptions& options) {
  const auto config = load_for_command(overrides, true);
  if (!config) {
    return 2;
  }
  const sigset_t signals = block_stop_signals();
  observability::init_logging(config->log_level);
  persistence::PgSession pg(config->pg_dsn, config->engine.store.pg, nullptr, nullptr,
                            &persistence::prepare_statements);
  auto redis = tool_redis(*config);
  persistence::ReconcileOptions reconcile;
  reconcile.batch = options.batch > 0 ? options.batch : config->engine.reconciler.batch;
  reconcile.scope_prefix = options.scope_prefix;
  persistence::Reconciler reconciler(pg, *redis, reconcile, nullptr);
  // Looping with the engine's setting turned off still needs a period: one minute.
  constexpr std::uint32_t kDefaultLoopMs = 60'000;
  const auto interval_ms = config->engine.reconciler.interval_ms > 0
                               ? config->engine.reconciler.interval_ms
                               : kDefaultLoopMs;
  for (;;) {
    const auto stats = reconciler.run_pass();
    print_reconcile(stats);
    if (options.once) {
      if (stats.errors > 0) {
        std::cerr << "seatflow: reconcile stopped early: " << stats.last_error << '\n';
        return 2;
      }
      return 0;
    }
    const timespec wait{static_cast<time_t>(interval_ms / 1000),
                        static_cast<long>(interval_ms % 1000) * 1'000'000L};
    if (sigtimedwait(&signals, nullptr, &wait) > 0) {
      return 0;
    }
  }
}

int cli_check(const CliOverrides& overrides, const RepairOptions& options) {
  const auto config = load_for_command(overrides, true);
  if (!config) {
    return 2;
  }
  persistence::CheckOptions check;
  check.batch = options.batch > 0 ? options.batch : config->engine.reconciler.batch;
  check.scope_prefix = options.scope_prefix;
  try {
    pqxx::connection conn(
        persistence::with_connection_defaults(config->pg_dsn, config->engine.store.pg));
    auto redis = tool_redis(*config);
    const auto checked =
        persistence::check_invariants(conn, *redis, check, [](const persistence::Violation& v) {
          std::cout << "violation kind=" << v.kind << " subject=" << v.subject << " detail=\""
                    << v.detail << "\"\n";
        });
    if (!checked.ok()) {
      std::cerr << "seatflow: check failed: " << checked.detail() << '\n';
      return 2;
    }
    const auto& summary = checked.value();
    std::cout << "check: orders=" << summary.orders << " seat_fields=" << summary.seat_fields
              << " violations=" << summary.violations;
    for (const auto& [kind, count] : summary.by_kind) {
      std::cout << ' ' << kind << '=' << count;
    }
    std::cout << '\n';
    return summary.violations == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "seatflow: check failed: " << e.what() << '\n';
    return 2;
  }
}

}  // namespace seatflow::app

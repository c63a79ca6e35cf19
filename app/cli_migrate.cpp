// `seatflow migrate`: the event slot (wal_level=logical first), then the schema migrations; safe to
// repeat.
#include <pqxx/pqxx>

#include <iostream>

#include "app/cli.hpp"
#include "persistence/drivers/pg_limits.hpp"
#include "persistence/jobs/event_relay.hpp"
#include "persistence/stores/migrations.hpp"

namespace seatflow::app {

int cli_migrate(const CliOverrides& overrides) {
  const auto config = load_for_command(overrides, false);
  if (!config) {
    return 2;
  }
  if (config->pg_dsn.empty()) {
    std::cerr << "seatflow: configuration error: SEATFLOW_PG_DSN is not set\n";
    return 2;
  }
  try {
    pqxx::connection conn(
        persistence::with_connection_defaults(config->pg_dsn, config->engine.store.pg));
    // The slot first: without wal_level=logical nothing is applied.
    std::string level;
    const auto& slot = config->engine.event_relay.relay.slot;
    const auto check = persistence::ensure_event_slot(conn, slot, &level);
    if (check == persistence::SlotCheck::not_logical) {
      std::cerr << "seatflow: migrate refused: " << wal_level_refusal(level) << '\n';
      return 1;
    }
    if (check == persistence::SlotCheck::foreign) {
      std::cerr << "seatflow: migrate refused: the replication slot " << slot
                << " belongs to another database; name this database's slot with "
                   "SEATFLOW_EVENT_SLOT\n";
      return 1;
    }
    if (check == persistence::SlotCheck::lost) {
      std::cerr << "seatflow: warning: the event slot " << slot
                << " was invalidated (wal_status=lost); it is left as it is "
                   "(docs/RELIABILITY.md)\n";
    }
    if (check == persistence::SlotCheck::created) {
      std::cout << "event slot " << slot << " created\n";
    }
    const auto report = persistence::apply_migrations(conn);
    (void)persistence::bind_event_slot(conn, slot);
    if (report.applied.empty()) {
      std::cout << "schema is at version " << report.to_version << "; nothing to apply\n";
    } else {
      std::cout << "schema migrated from version " << report.from_version << " to "
                << report.to_version << " (" << report.applied.size() << " applied)\n";
    }
    for (const auto& note : report.notes) {
      std::cout << note << '\n';
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "seatflow: migrate failed: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace seatflow::app

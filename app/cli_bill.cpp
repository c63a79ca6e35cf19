// `seatflow reconcile-bill --channel C --date YYYY-MM-DD` (SPEC §13): one bill run in this
// process, its repairs through the executor directly (its row locks serialise it with a running
// engine, as `seatflow query` does). Exit 0 reconciled without a discrepancy, 1 discrepancies
// recorded (or repairs that did not apply), 2 configuration or store error (another run of the
// channel and date in progress included), 3 the bill not ready, unreachable or not whole.
#include <unistd.h>

#include <array>
#include <iostream>
#include <memory>

#include "actors/bill_actor.hpp"
#include "actors/bill_lease.hpp"
#include "app/cli.hpp"
#include "app/gateways.hpp"
#include "channels/registry.hpp"
#include "http/status.hpp"
#include "observability/logger.hpp"
#include "observability/registry.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/stores/bill_store.hpp"
#include "persistence/stores/callback_store.hpp"
#include "persistence/stores/seat_scripts.hpp"
#include "persistence/stores/sql.hpp"

namespace seatflow::app {
namespace {

// Prints the run's line; returns the exit code it means.
int report_bill(domain::Channel channel, const std::string& date,
                const actors::BillRunResult& result) {
  std::cout << "reconcile-bill: channel=" << domain::to_string(channel) << " date=" << date;
  if (result.run) {
    const auto& run = *result.run;
    std::cout << " run=" << run.id << " state=" << run.state << " rows=" << run.rows
              << " matched=" << run.matched << " repaired=" << run.repaired
              << " discrepancies=" << run.discrepancies << " fees_cents=" << run.fees_cents
              << " counts=" << run.counts;
  }
  if (!result.detail.empty()) {
    std::cout << " detail=\"" << result.detail << '"';
  }
  std::cout << '\n';
  switch (result.end) {
    case actors::BillEnd::done:
      return result.run && (result.run->discrepancies > 0 || result.run->repair_failures() > 0) ? 1
                                                                                                : 0;
    case actors::BillEnd::not_ready:
    case actors::BillEnd::failed:
      return 3;
    case actors::BillEnd::store_error:
    case actors::BillEnd::refused:
    case actors::BillEnd::no_channel:
      return 2;
  }
  return 2;
}

int reconcile_bill(const Config& config, domain::Channel channel, const std::string& date) {
  channels::Registry registry;
  std::string channel_names;
  if (!add_channels(config, registry, channel_names)) {
    return 2;
  }
  const auto store_settings = actors::bill_store_settings(config.engine.store, config.engine.bill);
  persistence::PgSession pg(config.pg_dsn, store_settings.pg, nullptr, nullptr,
                            &persistence::prepare_statements);
  auto redis = tool_redis(config);
  persistence::SeatStore seats(*redis);
  persistence::CallbackStore callbacks(pg, seats, nullptr, &http::callback_status);
  persistence::BillStore store(pg);
  // The tool serves no /metrics; its runner's probe registers in a registry of its own.
  observability::Registry metrics;
  // The tool's run is held by its own process (not the engine's holder of this host and address),
  // its lease renewed while it runs.
  auto bill = config.engine.bill;
  std::array<char, 256> host{};
  (void)gethostname(host.data(), host.size() - 1);
  bill.holder = std::string(host.data()) + " reconcile-bill pid " + std::to_string(getpid());
  actors::BillRunner runner(
      gateway_dialects(config, registry).bill, bill, config.engine.query_client,
      config.engine.query_ca_file,
      [&callbacks](domain::VerifiedCallback callback, actors::ReplyFn reply) {
        reply(callbacks.process(callback));
      },
      metrics);
  const actors::BillLeaseKeeper lease(config.pg_dsn, config.engine.store.pg, bill.holder,
                                      bill.lease_ms, [&runner] { return runner.active(); });
  const auto result =
      actors::run_bill(runner, store, channel, date, [](const actors::BillRunResult&) {});
  return report_bill(channel, date, result);
}

}  // namespace

int cli_reconcile_bill(const CliOverrides& overrides, const BillOptions& options) {
  const auto channel = domain::parse_channel(options.channel);
  if (!channel) {
    std::cerr << "seatflow: reconcile-bill: --channel must be one of hmac, alipay, wechat, "
                 "stripe (got '"
              << options.channel << "')\n";
    return 2;
  }
  if (!persistence::valid_bill_date(options.date)) {
    std::cerr << "seatflow: reconcile-bill: --date must be a calendar day YYYY-MM-DD (got '"
              << options.date << "')\n";
    return 2;
  }
  const auto config = load_for_command(overrides, true);
  if (!config) {
    return 2;
  }
  observability::init_logging(config->log_level);
  try {
    return reconcile_bill(*config, *channel, options.date);
  } catch (const std::exception& error) {
    std::cerr << "seatflow: reconcile-bill failed: " << error.what() << '\n';
    return 2;
  }
}

}  // namespace seatflow::app

// `seatflow query <paymentNo>` (SPEC §10): asks the payment's gateway now and applies a paid or
// failed answer through the executor directly (its row locks serialise it with a running engine,
// as `reconcile` does). Exit 0 when the gateway answered, 1 for an unknown payment or a payment
// whose channel has no query dialect, 2 for a configuration or store error, 3 when the gateway did
// not answer or its answer was refused.
#include <chrono>
#include <iostream>
#include <memory>

#include "actors/payment_querier.hpp"
#include "app/cli.hpp"
#include "app/gateways.hpp"
#include "channels/registry.hpp"
#include "http/status.hpp"
#include "net/http_client.hpp"
#include "observability/logger.hpp"
#include "observability/registry.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/stores/callback_store.hpp"
#include "persistence/stores/query_store.hpp"
#include "persistence/stores/seat_scripts.hpp"
#include "persistence/stores/sql.hpp"

namespace seatflow::app {
namespace {

// Prints the answer's line; returns the exit code it means.
int report_query(const std::string& payment_no, domain::Channel channel,
                 const actors::QueryRun& run) {
  std::cout << "query: payment=" << payment_no << " channel=" << domain::to_string(channel)
            << " result=" << actors::to_string(run.result);
  if (run.outcome) {
    std::cout << " outcome=" << domain::to_string(run.outcome->result);
  }
  if (!run.detail.empty()) {
    std::cout << " detail=\"" << run.detail << '"';
  }
  std::cout << '\n';
  switch (run.result) {
    case actors::QueryResult::no_channel:
      return 1;
    case actors::QueryResult::unreachable:
    case actors::QueryResult::rejected:
      return 3;
    default:
      return 0;
  }
}

int query_payment(const Config& config, const std::string& payment_no) {
  channels::Registry registry;
  std::string channel_names;
  if (!add_channels(config, registry, channel_names)) {
    return 2;
  }
  persistence::PgSession pg(config.pg_dsn, config.engine.store.pg, nullptr, nullptr,
                            &persistence::prepare_statements);
  auto redis = tool_redis(config);
  persistence::SeatStore seats(*redis);
  persistence::CallbackStore callbacks(pg, seats, nullptr, &http::callback_status);
  persistence::QueryStore queries(pg);
  const auto payment = queries.load(payment_no);
  if (payment.error() == persistence::errc::not_found) {
    std::cerr << "seatflow: unknown payment " << payment_no << '\n';
    return 1;
  }
  if (!payment.ok()) {
    std::cerr << "seatflow: query failed: " << payment.detail() << '\n';
    return 2;
  }
  // The tool serves no /metrics; its querier's probe registers in a registry of its own.
  observability::Registry metrics;
  actors::PaymentQuerier querier(
      gateway_dialects(config, registry).query,
      std::make_unique<net::HttpClient>(config.engine.query_client, config.engine.query_ca_file),
      [&callbacks](domain::VerifiedCallback callback, actors::ReplyFn reply) {
        reply(callbacks.process(callback));
      },
      std::chrono::milliseconds(10'000), metrics);
  return report_query(payment_no, payment.value().channel, querier.run(payment.value(), true));
}

}  // namespace

int cli_query(const CliOverrides& overrides, const std::string& payment_no) {
  const auto config = load_for_command(overrides, true);
  if (!config) {
    return 2;
  }
  observability::init_logging(config->log_level);
  try {
    return query_payment(*config, payment_no);
  } catch (const std::exception& error) {
    std::cerr << "seatflow: query failed: " << error.what() << '\n';
    return 2;
  }
}

}  // namespace seatflow::app

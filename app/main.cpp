// SeatFlow command line: parses the flags and runs one subcommand (app/serve.hpp, app/cli.hpp). In
// the dev profile it also wires the dev tooling (dev/), which only this binary links.
#include <CLI/CLI.hpp>
#include <caf/config.hpp>
#include <pqxx/pqxx>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "app/cli.hpp"
#include "app/config.hpp"
#include "app/serve.hpp"
#include "codec/crypto.hpp"
#include "dev/mock_gateway.hpp"

#ifdef SEATFLOW_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace {

using seatflow::app::CliOverrides;
using seatflow::app::Config;

using seatflow::app::Config;

// The allocator serving malloc: "mimalloc <version>" when a probe allocation made with malloc lies
// in mimalloc's heap (linked but not serving, e.g. interposed by a preloaded library, is
// "default"), else "default".
std::string allocator_name() {
#ifdef SEATFLOW_WITH_MIMALLOC
  void* volatile probe = std::malloc(64);
  const bool served = mi_is_in_heap_region(probe);
  std::free(probe);
  if (served) {
    const int version = mi_version();
    return "mimalloc " + std::to_string(version / 100) + '.' + std::to_string(version / 10 % 10) +
           '.' + std::to_string(version % 10);
  }
#endif
  return "default";
}

// The dev mock gateway's settings as parsed, with the secrets it signs with (SEATFLOW_CALLBACK_*
// and the webhook dialects').
seatflow::dev::MockGatewaySettings mock_gateway_settings(const Config& config) {
  seatflow::dev::MockGatewaySettings mock;
  mock.auto_pay = config.mock_gateway.auto_pay;
  mock.delay_ms = config.mock_gateway.delay_ms;
  mock.keeps_deadline = config.mock_gateway.keeps_deadline;
  mock.channel = config.mock_gateway.channel;
  mock.secrets = config.callback_secrets;
  mock.window_ms = config.callback_window_ms;
  mock.stripe = config.stripe;
  mock.standard = config.standard;
  mock.currency = config.currency;
  mock.bill_timezone = config.engine.bill.timezone;
  return mock;
}

// The dev tooling a serving engine gets: the mock gateway, in the dev profile while
// SEATFLOW_MOCK_GATEWAY is on (the configuration refuses it in prod). Nothing otherwise.
std::optional<seatflow::app::ServeExtension> dev_tooling(const Config& config) {
  if (config.profile != seatflow::app::Profile::dev || !config.mock_gateway.enabled) {
    return std::nullopt;
  }
  auto gateway = std::make_shared<seatflow::dev::MockGateway>(mock_gateway_settings(config));
  seatflow::app::ServeExtension extension;
  extension.actors.push_back(gateway->actor());
  extension.routes = [gateway](seatflow::actors::Engine& engine) {
    return gateway->routes(engine);
  };
  extension.listening = [gateway](seatflow::actors::Engine& engine, const std::string& host,
                                  std::uint16_t port) { gateway->listening(engine, host, port); };
  return extension;
}

// The alipay/wechat/stripe/standard options of `seatflow sign`.
// The alipay/wechat/stripe/standard options of `seatflow sign`.
void add_gateway_sign_options(CLI::App* sign, seatflow::app::SignOptions& options) {
  auto& g = options.gateway;
  sign->add_option("--channel", options.channel,
                   "hmac (default), alipay, wechat, stripe or standard")
      ->check(CLI::IsMember({"hmac", "alipay", "wechat", "stripe", "standard"}));
  sign->add_option("--private-key", g.private_key_path, "alipay/wechat: the gateway's private key");
  sign->add_option("--app-id", g.app_id, "alipay: default SEATFLOW_ALIPAY_APP_ID");
  sign->add_option("--amount", g.amount, "alipay: total_amount in yuan (default 50.00)");
  sign->add_option("--trade-status", g.trade_status, "alipay: default TRADE_SUCCESS");
  sign->add_option(
      "--trade-no", g.trade_no,
      "alipay/stripe/standard: trade_no, data.object.id or data.tradeNo; default fresh");
  sign->add_option("--notify-id", g.notify_id, "alipay: default a fresh notify_id");
  sign->add_option("--charset", g.charset, "alipay: utf-8 (default) or gbk");
  sign->add_option("--serial", g.serial, "wechat: default the first configured serial");
  sign->add_option("--apiv3-key", g.apiv3_key, "wechat: default SEATFLOW_WECHAT_APIV3_KEY");
  sign->add_option("--mchid", g.mchid, "wechat: default SEATFLOW_WECHAT_MCHID");
  sign->add_option("--trade-state", g.trade_state, "wechat: default SUCCESS");
  sign->add_option("--amount-fen", g.amount_fen, "wechat: amount.total in fen (default 5000)")
      ->check(CLI::NonNegativeNumber);
  sign->add_option("--transaction-id", g.transaction_id, "wechat: default a fresh id");
  sign->add_option("--id", g.id, "wechat: notification id, default a fresh id");
  sign->add_option("--amount-cents", g.amount_cents,
                   "stripe/standard: amount in minor units (5000)")
      ->check(CLI::NonNegativeNumber);
  sign->add_option("--event-type", g.event_type,
                   "stripe/standard: event type, default from --status");
}

// The command line: every subcommand with its flags, each flag also an environment setting.
struct Commands {
  CLI::App* serve = nullptr;
  CLI::App* migrate = nullptr;
  CLI::App* version = nullptr;
  CLI::App* reconcile = nullptr;
  CLI::App* check = nullptr;
  CLI::App* sign = nullptr;
  CLI::App* tail = nullptr;
  CLI::App* query = nullptr;
  CLI::App* bill = nullptr;
  CliOverrides overrides;
  seatflow::app::BillOptions bill_options;
  seatflow::app::RepairOptions repair;
  seatflow::app::SignOptions sign_options;
  seatflow::app::TailOptions tail_options;
  std::string query_payment;
};

// Adds `name` to `sub`: its value overrides the environment setting `env`.
void add_setting_flag(CLI::App* sub, CliOverrides& overrides, const std::string& name,
                      const std::string& env, const std::string& help) {
  sub->add_option_function<std::string>(
      name, [&overrides, env](const std::string& v) { overrides.values[env] = v; },
      help + " (env " + env + ")");
}

void define_server_commands(CLI::App& app, Commands& c) {
  const auto flag = [&c](CLI::App* sub, const std::string& name, const std::string& env,
                         const std::string& help) {
    add_setting_flag(sub, c.overrides, name, env, help);
  };
  c.serve = app.add_subcommand("serve", "Serve gateway callbacks over HTTP until SIGINT/SIGTERM");
  flag(c.serve, "--profile", "SEATFLOW_PROFILE", "dev or prod");
  flag(c.serve, "--http-addr", "SEATFLOW_HTTP_ADDR", "listen address host:port");
  flag(c.serve, "--pg-dsn", "SEATFLOW_PG_DSN", "PostgreSQL connection URI");
  flag(c.serve, "--redis-url", "SEATFLOW_REDIS_URL", "Redis URL redis://host:port[/db]");
  flag(c.serve, "--failpoints", "SEATFLOW_FAILPOINTS", "fault injection, e.g. mark_sold=error@0.1");
  flag(c.serve, "--retention-horizon", "SEATFLOW_RETENTION_HORIZON",
       "age (by received_at) after which callback-log rows and their raw requests are removed, "
       "e.g. 30d; payment events are WAL messages, freed when the relay confirms them");

  c.migrate = app.add_subcommand("migrate", "Apply the schema migrations (safe to repeat)");
  flag(c.migrate, "--pg-dsn", "SEATFLOW_PG_DSN", "PostgreSQL connection URI");

  c.version = app.add_subcommand("version", "Print the version and exit");

  c.reconcile = app.add_subcommand(
      "reconcile", "Repair the Redis seat hashes from PostgreSQL (a pass every interval)");
  c.reconcile->add_flag("--once", c.repair.once, "run one full pass, print a summary, exit");
  c.check = app.add_subcommand(
      "check", "Verify the PostgreSQL/Redis invariants; exit 1 when any is violated");
  for (auto* sub : {c.reconcile, c.check}) {
    flag(sub, "--pg-dsn", "SEATFLOW_PG_DSN", "PostgreSQL connection URI");
    flag(sub, "--redis-url", "SEATFLOW_REDIS_URL", "Redis URL redis://host:port[/db]");
    sub->add_option("--batch", c.repair.batch, "orders per batch (default the setting)")
        ->check(CLI::Range(1, 100'000));
    sub->add_option("--scope-prefix", c.repair.scope_prefix,
                    "only orders (and shows) whose id starts with this");
  }
}

void define_tool_commands(CLI::App& app, Commands& c) {
  const auto flag = [&c](CLI::App* sub, const std::string& name, const std::string& env,
                         const std::string& help) {
    add_setting_flag(sub, c.overrides, name, env, help);
  };
  c.sign = app.add_subcommand(
      "sign", "Print a signed callback (hmac, alipay, wechat, stripe or standard) and a curl line");
  c.sign->add_option("--payment-no", c.sign_options.payment_no, "the payment to report on")
      ->required();
  c.sign->add_option("--status", c.sign_options.status, "1 = success, 2 = failure")
      ->check(CLI::Range(0, 9));
  c.sign->add_option("--callback-id", c.sign_options.callback_id, "default: a fresh id");
  c.sign->add_option("--timestamp", c.sign_options.timestamp_ms, "epoch ms; default: now");
  c.sign->add_flag("--body-only", c.sign_options.body_only, "print only the body");
  add_gateway_sign_options(c.sign, c.sign_options);
  flag(c.sign, "--http-addr", "SEATFLOW_HTTP_ADDR", "engine address for the curl line");

  auto* events = app.add_subcommand("events", "Payment events on the Redis Stream");
  events->require_subcommand(1);
  c.tail = events->add_subcommand(
      "tail", "Print payment events as JSON lines (one per stream entry) until SIGINT");
  c.tail->add_option(
      "--from", c.tail_options.from,
      "start after this stream id (default 0: the whole retained stream; $: new only)");
  c.tail->add_option("--count", c.tail_options.count, "exit after this many events")
      ->check(CLI::NonNegativeNumber);
  c.tail->add_flag("--once", c.tail_options.once, "exit when no more events are waiting");
  flag(c.tail, "--redis-url", "SEATFLOW_REDIS_URL", "Redis URL redis://host:port[/db]");
  flag(c.tail, "--stream", "SEATFLOW_EVENT_STREAM", "stream key (default seatflow:events)");

  c.query = app.add_subcommand(
      "query", "Ask the payment's gateway now and apply a paid or failed answer (SPEC §10)");
  c.query->add_option("payment-no", c.query_payment, "the payment to ask about")->required();
  flag(c.query, "--pg-dsn", "SEATFLOW_PG_DSN", "PostgreSQL connection URI");
  flag(c.query, "--redis-url", "SEATFLOW_REDIS_URL", "Redis URL redis://host:port[/db]");

  // Checked by the command itself, so a missing or wrong value exits 2 as SPEC §13 says.
  c.bill = app.add_subcommand("reconcile-bill",
                              "Reconcile a channel's daily bill against PostgreSQL (SPEC §13)");
  c.bill->add_option("--channel", c.bill_options.channel, "hmac, alipay, wechat or stripe");
  c.bill->add_option("--date", c.bill_options.date, "the bill date YYYY-MM-DD");
  flag(c.bill, "--pg-dsn", "SEATFLOW_PG_DSN", "PostgreSQL connection URI");
  flag(c.bill, "--redis-url", "SEATFLOW_REDIS_URL", "Redis URL redis://host:port[/db]");
}

// Runs the subcommand the command line named.
int run_command(const Commands& c) {
  if (c.query->parsed()) {
    return seatflow::app::cli_query(c.overrides, c.query_payment);
  }
  if (c.bill->parsed()) {
    return seatflow::app::cli_reconcile_bill(c.overrides, c.bill_options);
  }
  if (c.tail->parsed()) {
    return seatflow::app::cli_events_tail(c.overrides, c.tail_options);
  }
  if (c.serve->parsed()) {
    return seatflow::app::run_serve(c.overrides, dev_tooling);
  }
  if (c.migrate->parsed()) {
    return seatflow::app::cli_migrate(c.overrides);
  }
  if (c.reconcile->parsed()) {
    return seatflow::app::cli_reconcile(c.overrides, c.repair);
  }
  if (c.check->parsed()) {
    return seatflow::app::cli_check(c.overrides, c.repair);
  }
  if (c.sign->parsed()) {
    return seatflow::app::cli_sign(c.overrides, c.sign_options);
  }
  if (c.version->parsed()) {
    std::cout << "seatflow " << SEATFLOW_VERSION << " (CAF " << CAF_VERSION / 10000 << '.'
              << (CAF_VERSION / 100) % 100 << '.' << CAF_VERSION % 100 << ", libpqxx "
              << PQXX_VERSION << ", allocator " << allocator_name() << ")\n";
    return 0;
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything else touches OpenSSL (codec/crypto.hpp says why).
  if (!seatflow::codec::keep_openssl_until_exit()) {
    std::cerr << "seatflow: OpenSSL failed to initialise\n";
    return 1;
  }
  CLI::App app{
      "SeatFlow: proves payment-gateway callbacks genuine and applies each exactly once.\n"
      "Settings come from SEATFLOW_* environment variables; flags override them."};
  app.require_subcommand(1);
  Commands commands;
  define_server_commands(app, commands);
  define_tool_commands(app, commands);
  // An argument error (an unknown option or subcommand, a missing or malformed value) exits 2, as
  // a configuration error does (README "Commands"); --help and --version print and exit 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  return run_command(commands);
}

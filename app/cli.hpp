// The command line's subcommands other than `serve` (app/serve.hpp), one entry point each, and what
// they share: the settings their flags override, the configuration they load, the stop signals,
// the tools' Redis client. app/main.cpp parses the command line and calls one of them; each returns
// the process's exit code.
#pragma once

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "app/config.hpp"
#include "app/events_tail.hpp"
#include "app/gateway_sign.hpp"
#include "persistence/drivers/redis.hpp"

namespace seatflow::app {

// SEATFLOW_* name → value, from the flags that override the environment.
struct CliOverrides {
  std::map<std::string, std::string> values;
};

// A flag's value first, then the environment.
[[nodiscard]] SettingLookup make_lookup(const CliOverrides& overrides);
// The configuration a command runs with; nullopt after one error line on stderr.
[[nodiscard]] std::optional<Config> load_for_command(const CliOverrides& overrides,
                                                     bool require_stores);
// Blocks SIGINT and SIGTERM in this thread and every thread started after it, so that only an
// explicit sigwait/sigtimedwait on the returned set receives them.
[[nodiscard]] sigset_t block_stop_signals();
// The line that refuses a PostgreSQL whose WAL carries no logical decoding information.
[[nodiscard]] std::string wal_level_refusal(const std::string& level);
// A live Redis client for the command-line tools (no failpoints).
[[nodiscard]] std::unique_ptr<persistence::RedisClient> tool_redis(const Config& config);

// `seatflow reconcile` and `seatflow check`.
struct RepairOptions {
  bool once = false;
  std::size_t batch = 0;  // 0: SEATFLOW_RECONCILE_BATCH_ORDERS_MAX
  std::string scope_prefix;
};

// `seatflow sign`.
struct SignOptions {
  std::string payment_no;
  int status = 1;
  std::string callback_id;
  std::int64_t timestamp_ms = 0;
  bool body_only = false;
  std::string channel = "hmac";
  GatewaySignOptions gateway;  // --channel alipay|wechat|stripe|standard
};

// `seatflow reconcile-bill`.
struct BillOptions {
  std::string channel;
  std::string date;  // YYYY-MM-DD
};

// `seatflow migrate` (app/cli_migrate.cpp): the event slot, then the schema migrations.
[[nodiscard]] int cli_migrate(const CliOverrides& overrides);
// `seatflow reconcile [--once]` (app/cli_repair.cpp): one pass and a summary, or a pass every
// interval until a signal.
[[nodiscard]] int cli_reconcile(const CliOverrides& overrides, const RepairOptions& options);
// `seatflow check` (app/cli_repair.cpp): one line per violation, a summary; exit 1 with
// violations, 2 on store errors.
[[nodiscard]] int cli_check(const CliOverrides& overrides, const RepairOptions& options);
// `seatflow query <paymentNo>` (app/cli_query.cpp, SPEC §10).
[[nodiscard]] int cli_query(const CliOverrides& overrides, const std::string& payment_no);
// `seatflow reconcile-bill --channel C --date YYYY-MM-DD` (app/cli_bill.cpp, SPEC §13): exit 0
// no discrepancy, 1 discrepancies recorded, 2 configuration or store error, 3 bill not ready,
// unreachable or not whole.
[[nodiscard]] int cli_reconcile_bill(const CliOverrides& overrides, const BillOptions& options);
// `seatflow sign` (app/cli_sign.cpp): a signed callback and a curl line.
[[nodiscard]] int cli_sign(const CliOverrides& overrides, SignOptions options);
// `seatflow events tail` (app/cli_events.cpp) until SIGINT/SIGTERM.
[[nodiscard]] int cli_events_tail(const CliOverrides& overrides, TailOptions options);

}  // namespace seatflow::app

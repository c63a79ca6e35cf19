// Functional tests: the command line, configuration errors, migrate, SIGTERM, secret hygiene.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <sstream>
#include <string_view>
#include <thread>

#include "persistence/stores/migrations.hpp"
#include "support/engine_fixture.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

// Every SEATFLOW_* setting removed, so the test's own environment cannot leak into a CLI check.
EnvOverrides clean_env() {
  EnvOverrides env;
  for (const char* name : {"SEATFLOW_PROFILE", "SEATFLOW_HTTP_ADDR", "SEATFLOW_PG_DSN",
                           "SEATFLOW_REDIS_URL", "SEATFLOW_CALLBACK_SECRETS", "SEATFLOW_API_TOKEN",
                           "SEATFLOW_FAILPOINTS", "SEATFLOW_LOG_LEVEL"}) {
    env[name] = std::nullopt;
  }
  return env;
}

std::vector<std::string> non_empty_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      lines.push_back(line);
    }
  }
  return lines;
}

// Runs `seatflow serve` expecting a configuration error: exit 2, one line naming `setting`.
void expect_config_error(EnvOverrides env, const std::string& setting) {
  const auto result = run_to_exit({"serve"}, env, std::chrono::seconds(10));
  EXPECT_FALSE(result.timed_out) << "serve started instead of refusing:\n" << result.output;
  EXPECT_EQ(result.exit_code, 2) << result.output;
  const auto lines = non_empty_lines(result.output);
  ASSERT_EQ(lines.size(), 1U) << result.output;
  EXPECT_NE(lines[0].find(setting), std::string::npos) << lines[0];
}

int schema_migration_rows(Stores& stores) {
  pqxx::work tx(stores.pg());
  return tx.exec1("SELECT count(*) FROM schema_migrations")[0].as<int>();
}

TEST(Cli, VersionPrintsTheNameAndExitsZero) {
  const auto result = run_to_exit({"version"}, clean_env());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("seatflow"), std::string::npos) << result.output;
}

// A Release build serves malloc from mimalloc (CMakeLists.txt); a sanitizer build from its
// sanitizer's allocator. The version names the allocator that served a probe allocation.
TEST(Cli, VersionNamesTheAllocatorTheBuildServesMallocFrom) {
  const auto result = run_to_exit({"version"}, clean_env());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::string expected = std::string("allocator ") + SEATFLOW_SERVER_ALLOCATOR;
  EXPECT_NE(result.output.find(expected), std::string::npos) << result.output;
}

// Clock tests preload libfaketime (bench/chaos.sh's scenarios 13-14 do): the allocator the build
// links must start under it. (jemalloc did not: its start reads the clock, and the preloaded clock
// allocates.) A sanitizer build links none, and its runtime refuses any library preloaded before
// it.
TEST(Cli, StartsUnderAPreloadedLibfaketime) {
  if (std::string_view(SEATFLOW_SERVER_ALLOCATOR) == "default") {
    GTEST_SKIP() << "no allocator linked (a sanitizer build)";
  }
  std::string library;
  for (const auto& dir : std::filesystem::directory_iterator("/usr/lib")) {
    const auto candidate = dir.path() / "faketime" / "libfaketimeMT.so.1";
    if (std::filesystem::exists(candidate)) {
      library = candidate.string();
    }
  }
  ASSERT_FALSE(library.empty()) << "libfaketime is missing (scripts/deps.sh installs faketime)";
  auto env = clean_env();
  env["LD_PRELOAD"] = library;
  env["FAKETIME"] = "+301";
  env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1";
  const auto result = run_to_exit({"version"}, env, std::chrono::seconds(10));
  EXPECT_FALSE(result.timed_out) << "seatflow hung at start under libfaketime:\n" << result.output;
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("seatflow"), std::string::npos) << result.output;
}

TEST(Cli, HelpListsTheSubcommands) {
  const auto result = run_to_exit({"--help"}, clean_env());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (const char* command : {"serve", "migrate", "version"}) {
    EXPECT_NE(result.output.find(command), std::string::npos) << command << "\n" << result.output;
  }
}

TEST(Cli, ProdWithoutCallbackSecretsRefusesToStart) {
  auto env = clean_env();
  env["SEATFLOW_PROFILE"] = "prod";
  env["SEATFLOW_HTTP_ADDR"] = "127.0.0.1:" + std::to_string(free_port());
  env["SEATFLOW_PG_DSN"] = test_pg_dsn();
  env["SEATFLOW_REDIS_URL"] = test_redis_url();
  expect_config_error(env, "SEATFLOW_CALLBACK_SECRETS");
}

TEST(Cli, NonsenseHttpAddrRefusesToStart) {
  auto env = engine_env(free_port());
  env["SEATFLOW_HTTP_ADDR"] = "nonsense";
  expect_config_error(env, "SEATFLOW_HTTP_ADDR");
}

TEST(Cli, UnknownProfileRefusesToStart) {
  auto env = engine_env(free_port());
  env["SEATFLOW_PROFILE"] = "staging";
  expect_config_error(env, "SEATFLOW_PROFILE");
}

TEST(Cli, MigrateTwiceIsIdempotent) {
  Stores stores;  // the schema exists from here on (possibly applied by this very process)
  auto env = clean_env();
  env["SEATFLOW_PG_DSN"] = test_pg_dsn();

  const auto first = run_to_exit({"migrate"}, env);
  EXPECT_EQ(first.exit_code, 0) << first.output;
  const int rows_after_first = schema_migration_rows(stores);
  EXPECT_GE(rows_after_first, 1);

  const auto second = run_to_exit({"migrate"}, env);
  EXPECT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("nothing to apply"), std::string::npos) << second.output;
  EXPECT_EQ(schema_migration_rows(stores), rows_after_first);
}

// The test DSN with its database name replaced.
std::string dsn_for_database(const std::string& dsn, const std::string& database) {
  const auto scheme = dsn.find("://");
  const auto slash = dsn.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (slash == std::string::npos) {
    ADD_FAILURE() << "cannot find the database name in " << dsn;
    return dsn;
  }
  const auto query = dsn.find('?', slash);
  return dsn.substr(0, slash + 1) + database +
         (query == std::string::npos ? std::string() : dsn.substr(query));
}

// Engines (or migrate jobs) started together on an empty database must all succeed: the
// migrations promise "several engines starting at once apply each migration exactly once".
// PostgreSQL's CREATE TABLE IF NOT EXISTS is not race-free on its own, so the advisory lock must be
// taken before the bookkeeping table is created, not only around each migration.
TEST(Cli, ConcurrentMigrateOnAFreshDatabaseAllSucceed) {
  Stores stores;
  constexpr int kRounds = 3;
  constexpr int kJobs = 4;
  for (int round = 0; round < kRounds; ++round) {
    const auto database = stores.prefix() + "_mig" + std::to_string(round);
    {
      pqxx::nontransaction tx(stores.pg());
      tx.exec("DROP DATABASE IF EXISTS " + database);
      tx.exec("CREATE DATABASE " + database);
    }
    auto env = clean_env();
    env["SEATFLOW_PG_DSN"] = dsn_for_database(test_pg_dsn(), database);
    // Slot names are per server: this database gets its own, which the jobs create once.
    const auto slot = database + "_events";
    env["SEATFLOW_EVENT_SLOT"] = slot;
    std::vector<std::unique_ptr<EngineProcess>> jobs;
    for (int i = 0; i < kJobs; ++i) {
      jobs.push_back(std::make_unique<EngineProcess>(std::vector<std::string>{"migrate"}, env));
    }
    // Each migration is applied by exactly one job (one job may apply the first, another the
    // next), so the "(N applied)" counts add up to the number of migrations.
    std::size_t applied = 0;
    for (auto& job : jobs) {
      const int code = job->wait_exit(std::chrono::seconds(20));
      EXPECT_EQ(code, 0) << "round " << round << ": " << job->log();
      const auto log = job->log();
      if (const auto open = log.find(" applied)"); open != std::string::npos) {
        const auto start = log.rfind('(', open);
        applied += std::stoul(log.substr(start + 1, open - start - 1));
      }
    }
    EXPECT_EQ(applied, persistence::migrations().size())
        << "round " << round << ": each migration is applied exactly once";
    jobs.clear();
    pqxx::nontransaction tx(stores.pg());
    EXPECT_EQ(tx.exec_params("SELECT pg_drop_replication_slot(slot_name) FROM "
                             "pg_replication_slots WHERE slot_name = $1",
                             slot)
                  .size(),
              1u)
        << "round " << round << ": the jobs created the event slot";
    tx.exec("DROP DATABASE IF EXISTS " + database);
  }
}

TEST(Cli, ServeOnAPortInUseExitsWithAClearLine) {
  Stores stores;
  // Hold a listening socket on a loopback port.
  const int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(holder, 4), 0);
  ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const auto port = ntohs(addr.sin_port);

  const auto result = run_to_exit({"serve"}, engine_env(port), std::chrono::seconds(10));
  ::close(holder);
  EXPECT_FALSE(result.timed_out) << "serve kept running on a port it could not bind";
  EXPECT_NE(result.exit_code, 0) << result.output;
  const auto expected = "127.0.0.1:" + std::to_string(port);
  const auto lines = non_empty_lines(result.output);
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(),
                          [&](const std::string& line) {
                            return line.find(expected) != std::string::npos &&
                                   line.find("listen") != std::string::npos;
                          }))
      << "no line names the address it could not listen on:\n"
      << result.output;
}

TEST(Lifecycle, SigtermStopsTheEngineWithExitZero) {
  Stores stores;
  const auto payment = stores.id("pay");
  stores.create_pending(payment, stores.id("ord"), stores.id("show"), {"S1"});
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  ASSERT_EQ(engine.notify(signed_body(stores.id("cb1"), payment, 1)).status, 200);
  // An idle keep-alive connection must not hold the stop up.
  auto idle = engine.connect();
  ASSERT_EQ(idle->get("/healthz").status, 200);

  engine.process().signal(SIGTERM);
  const int code = engine.process().wait_exit(std::chrono::seconds(12));
  EXPECT_EQ(code, 0) << "exit code (-1: still running after 12 s)\n" << engine.log();
  EXPECT_TRUE(idle->is_closed_by_peer(2000));
}

// While a stop drains the callbacks in flight, a request on an open keep-alive connection is
// answered 503 (the gateway retries it later) and never reaches the engine that is stopping.
TEST(Lifecycle, RequestsDuringTheDrainAre503AndTheInFlightOneCompletes) {
  Stores stores;
  const auto slow = stores.id("pay-slow");
  const auto late = stores.id("pay-late");
  stores.create_pending(slow, stores.id("ord-slow"), stores.id("show"), {"D1"});
  stores.create_pending(late, stores.id("ord-late"), stores.id("show"), {"D2"});
  TestEngine engine(EnvOverrides{{"SEATFLOW_FAILPOINTS", "pg_commit=delay:1500ms@1"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  auto open = engine.connect();
  ASSERT_EQ(open->get("/healthz").status, 200);
  Response in_flight;
  std::thread sender([&] {
    auto client = engine.connect();
    in_flight = client->post_json(kHmacNotifyPath, signed_body(stores.id("cb-slow"), slow, 1));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // its commit is being delayed
  engine.process().signal(SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the drain has begun
  const auto refused = open->post_json(kHmacNotifyPath, signed_body(stores.id("cb-late"), late, 1));
  sender.join();
  EXPECT_EQ(refused.status, 503) << refused.body << refused.error;
  EXPECT_EQ(refused.header("retry-after"), "1");
  EXPECT_EQ(in_flight.status, 200) << in_flight.body << in_flight.error;
  EXPECT_EQ(engine.process().wait_exit(std::chrono::seconds(12)), 0) << engine.log();
  EXPECT_EQ(stores.payment_status(slow), 1);
  EXPECT_EQ(stores.payment_status(late), 0);
  EXPECT_FALSE(stores.log_row(stores.id("cb-late")).has_value());
}

TEST(Secrets, NeverAppearInTheLogEvenAtDebugLevel) {
  Stores stores;
  const auto payment = stores.id("pay");
  const auto order = stores.id("ord");
  stores.create_pending(payment, order, stores.id("show"), {"L1", "L2"});
  const std::string rotated = "functional-test-rotated-secret-c0ffee";
  TestEngine engine(
      EnvOverrides{{"SEATFLOW_LOG_LEVEL", "debug"},
                   {"SEATFLOW_CALLBACK_SECRETS", std::string(kTestSecret) + "," + rotated}});
  ASSERT_TRUE(engine.healthy());

  std::vector<std::string> bodies = {
      signed_body(stores.id("cb-fail"), payment, 2),
      signed_body(stores.id("cb-ok"), payment, 1, domain::unix_time_ms(), rotated),
      signed_body(stores.id("cb-bad"), payment, 1, domain::unix_time_ms(),
                  "an-unknown-secret-0000"),
      signed_body(stores.id("cb-stale"), payment, 1, domain::unix_time_ms() - 400'000),
      signed_body(stores.id("cb-status"), payment, 7),
      signed_body(stores.id("cb-unknown"), stores.id("nobody"), 1),
  };
  bodies.push_back(bodies[1]);                                    // duplicate
  bodies.push_back(signed_body(stores.id("cb-ok"), payment, 2));  // conflict
  std::vector<int> statuses;
  for (const auto& body : bodies) {
    statuses.push_back(engine.notify(body).status);
  }
  EXPECT_EQ(statuses, (std::vector<int>{200, 200, 401, 401, 400, 404, 200, 409}));
  EXPECT_EQ(stores.payment_status(payment), 1);

  ASSERT_EQ(engine.process().stop(), 0);
  const auto log = engine.log();
  EXPECT_NE(log.find("serving"), std::string::npos) << "the log was not captured:\n" << log;
  // The conflict is logged as an error (SPEC §6.1): callback events do reach this log.
  EXPECT_NE(log.find("conflict"), std::string::npos) << log;
  EXPECT_EQ(log.find(kTestSecret), std::string::npos) << log;
  EXPECT_EQ(log.find(rotated), std::string::npos) << log;
  for (const auto& body : bodies) {
    const auto sign = sign_of(body);
    ASSERT_EQ(sign.size(), 64U);
    EXPECT_EQ(log.find(sign), std::string::npos) << "sign " << sign << " logged:\n" << log;
    // Not even a long prefix of it.
    EXPECT_EQ(log.find(sign.substr(0, 16)), std::string::npos) << log;
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

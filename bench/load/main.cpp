// seatflow-bench: acts as the payment gateway — seeds, sends signed callbacks, measures, checks.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "channels/hmac/hmac_channel.hpp"
#include "load/check.hpp"
#include "load/client.hpp"
#include "load/history.hpp"
#include "load/plan.hpp"
#include "load/probes.hpp"
#include "load/report.hpp"
#include "load/seed.hpp"
#include "persistence/drivers/redis.hpp"
#include "persistence/stores/events.hpp"

namespace {

using namespace seatflow::bench;
using seatflow::persistence::RedisClient;

constexpr std::string_view kNotifyPath = "/api/payment/notify/hmac";
constexpr std::uint32_t kRedisTimeoutMs = 30000;

struct Options {
  std::string scenario = "unique";
  std::uint32_t payments = 1000;
  std::uint32_t duplicates = 100;
  std::uint32_t connections = 64;
  double rate = 0;
  std::string url = "http://127.0.0.1:8080";
  std::string pg_dsn;
  std::string redis_url;
  std::string secret;
  std::string json_path;
  std::string target = "seatflow";
  std::string run_prefix;
  bool no_seed = false;
  bool no_check = false;
  bool seed_only = false;
  std::string bodies_path;  // --write-bodies: signed bodies for another load generator, then exit
  bool no_vacuum = false;
  // The engine's event slot, awaited after seeding (SEATFLOW_EVENT_SLOT, as the engine reads it).
  std::string event_slot = [] {
    const char* env = std::getenv("SEATFLOW_EVENT_SLOT");
    return std::string(env != nullptr && *env != '\0'
                           ? std::string_view(env)
                           : seatflow::persistence::events::kDefaultSlot);
  }();
  bool no_progress = false;
  bool retry_503 = true;
  std::uint32_t max_attempts = 20;
  std::uint32_t retry_delay_ms = 50;
  std::uint32_t timeout_s = 300;
  std::uint32_t request_timeout_ms = 30000;
  std::uint32_t stats_wait_ms = 11000;
  std::uint32_t body_ttl_ms = 240000;
  std::uint32_t prefill = 0;
  std::uint64_t shuffle_seed = 1;
  int engine_pid = 0;
  bool gateway = false;
  std::uint32_t max_backoff_ms = 1000;
  std::string before_check;
  bool lenient_duplicates = false;
  std::uint32_t proxy_resends = 0;
  std::string source_address;
  std::string hold_file;
  std::string started_file;
  std::string history_path;        // --history: every request and answer, written here
  std::string check_history_path;  // --check-history: check a recorded history and exit
  std::string stream;
  bool stream_lossy = false;
  bool events_partial = false;
};

struct Target {
  std::string host;
  std::uint16_t port = 0;
};

// http://HOST:PORT[/...] with HOST a loopback address; anything else is refused.
std::optional<Target> parse_loopback_url(const std::string& url, std::string* why) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) {
    *why = "only http:// URLs are supported";
    return std::nullopt;
  }
  auto rest = std::string_view(url).substr(kScheme.size());
  rest = rest.substr(0, rest.find('/'));
  std::string host;
  std::string_view port_text;
  if (rest.starts_with('[')) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) {
      *why = "bad IPv6 literal";
      return std::nullopt;
    }
    host = std::string(rest.substr(1, close - 1));
    port_text = rest.substr(close + 1);
  } else {
    const auto colon = rest.rfind(':');
    host = std::string(rest.substr(0, colon));
    port_text = colon == std::string_view::npos ? "" : rest.substr(colon);
  }
  if (!port_text.starts_with(':') || port_text.size() < 2) {
    *why = "the URL needs an explicit port";
    return std::nullopt;
  }
  const int port = std::atoi(std::string(port_text.substr(1)).c_str());
  if (port <= 0 || port > 65535) {
    *why = "bad port";
    return std::nullopt;
  }
  if (host == "localhost") {
    host = "127.0.0.1";
  }
  in_addr v4{};
  in6_addr v6{};
  const bool is_v4 = inet_pton(AF_INET, host.c_str(), &v4) == 1;
  const bool loopback =
      is_v4 ? (ntohl(v4.s_addr) >> 24) == 127
            : inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
  if (!loopback) {
    *why = "only loopback targets (127.0.0.0/8, localhost, [::1]) are allowed";
    return std::nullopt;
  }
  return Target{host, static_cast<std::uint16_t>(port)};
}

// Frames a signed body as one complete HTTP/1.1 request.
RequestEncoder make_encoder(const seatflow::channels::HmacChannel& channel, const Ids& ids,
                            const Plan& plan, const Target& target) {
  const std::string head = "POST " + std::string(kNotifyPath) +
                           " HTTP/1.1\r\nHost: " + target.host + ":" + std::to_string(target.port) +
                           "\r\nContent-Type: application/json\r\nContent-Length: ";
  return [&channel, &ids, &plan, head](std::uint32_t cb, std::int64_t now_ms) {
    const auto& c = plan.callbacks[cb];
    const auto body = channel.signed_body(ids.callback_id(c.payment, c.sequence),
                                          ids.payment_no(c.payment), c.status, now_ms - c.age_ms);
    return head + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
}

// One signed body per line, in delivery order, each signed now (minus its planned age): a load
// generator that cycles through the file sends every callback once per pass.
bool write_bodies(const Options& o, const Ids& ids, const Plan& plan) {
  const seatflow::channels::HmacChannel channel(
      seatflow::channels::HmacConfig{{o.secret}, 300'000});
  std::ofstream out(o.bodies_path);
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  for (const auto& phase : plan.phases) {
    for (const auto cb : phase) {
      const auto& c = plan.callbacks[cb];
      out << channel.signed_body(ids.callback_id(c.payment, c.sequence), ids.payment_no(c.payment),
                                 c.status, now_ms - c.age_ms)
          << '\n';
    }
  }
  out.close();
  if (!out) {
    std::cerr << "seatflow-bench: cannot write " << o.bodies_path << '\n';
    return false;
  }
  std::cout << ids.prefix() << '\n';
  return true;
}

std::unique_ptr<RedisClient> connect_redis(const std::string& url) {
  const auto endpoint = seatflow::persistence::parse_redis_url(url);
  if (!endpoint.ok()) {
    throw std::runtime_error("bad --redis-url: " + endpoint.detail());
  }
  // The engine's sentinel settings, when set, name the primary for the bench too (SPEC §15).
  auto located = endpoint.value();
  if (const char* list = std::getenv("SEATFLOW_REDIS_SENTINELS"); list != nullptr && *list) {
    auto sentinels = seatflow::persistence::parse_sentinels(list);
    if (!sentinels.ok()) {
      throw std::runtime_error("bad SEATFLOW_REDIS_SENTINELS: " + sentinels.detail());
    }
    located.sentinels.addresses = std::move(sentinels).value();
    if (const char* name = std::getenv("SEATFLOW_REDIS_MASTER_NAME"); name != nullptr && *name) {
      located.sentinels.master_name = name;
    }
  }
  auto client = std::make_unique<RedisClient>(located, kRedisTimeoutMs, nullptr);
  if (!client->ping()) {
    throw std::runtime_error("Redis at " + url + " does not answer PING");
  }
  return client;
}

void add_cli(CLI::App& app, Options& o) {
  app.add_option("--scenario", o.scenario, "unique | storm | mixed")
      ->check(CLI::IsMember({"unique", "storm", "mixed"}));
  app.add_option("--payments", o.payments, "distinct payments U")
      ->check(CLI::Range(1u, 20'000'000u));
  app.add_option("--duplicates", o.duplicates, "storm: deliveries per callback D")
      ->check(CLI::Range(1u, 100'000u));
  app.add_option("--connections", o.connections, "keep-alive connections C, one request each")
      ->check(CLI::Range(1u, 20'000u));
  app.add_option("--rate", o.rate, "requests/s, open loop; 0 = closed loop")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--url", o.url,
                 "target http://127.0.0.1:PORT (loopback only); a comma-separated list spreads the "
                 "connections over several engines");
  app.add_option("--pg-dsn", o.pg_dsn, "PostgreSQL URI (default $SEATFLOW_PG_DSN)");
  app.add_option("--redis-url", o.redis_url, "Redis URL (default $SEATFLOW_REDIS_URL)");
  app.add_option("--secret", o.secret,
                 "signing secret (default: first of $SEATFLOW_CALLBACK_SECRETS)");
  app.add_option("--json", o.json_path, "write the report as JSON to this file");
  app.add_option("--target", o.target, "seatflow | nginx (nginx: no seeding, no checks)")
      ->check(CLI::IsMember({"seatflow", "nginx"}));
  app.add_option("--run-prefix", o.run_prefix, "id prefix (default: fresh; reuse with --no-seed)");
  app.add_flag("--no-seed", o.no_seed, "do not seed (data seeded earlier under --run-prefix)");
  app.add_flag("--no-check", o.no_check, "skip the invariant checks");
  app.add_flag("--seed-only", o.seed_only, "seed, print the run prefix and exit");
  app.add_option("--write-bodies", o.bodies_path,
                 "seed (unless --no-seed), write every planned callback's body signed now, one per "
                 "line, to this file for an independent load generator (wrk), and exit");
  app.add_flag("--no-vacuum", o.no_vacuum, "skip VACUUM ANALYZE after seeding");
  app.add_option("--event-slot", o.event_slot,
                 "after seeding, wait until this slot (when streamed) has decoded the seed's WAL "
                 "(default: SEATFLOW_EVENT_SLOT or seatflow_events)");
  app.add_flag("--no-progress", o.no_progress, "no progress bar even on a terminal");
  app.add_option("--retry-503", o.retry_503,
                 "resend 503 answers after --retry-delay-ms (true|false)");
  app.add_option("--max-attempts", o.max_attempts, "attempts per delivery")
      ->check(CLI::Range(1u, 1'000'000u));
  app.add_option("--retry-delay-ms", o.retry_delay_ms, "delay before a resend")
      ->check(CLI::Range(0u, 60'000u));
  app.add_option("--timeout-s", o.timeout_s, "deadline of the whole load")
      ->check(CLI::Range(1u, 86'400u));
  app.add_option("--request-timeout-ms", o.request_timeout_ms, "deadline of one HTTP exchange")
      ->check(CLI::Range(1u, 600'000u));
  app.add_option("--stats-wait-ms", o.stats_wait_ms,
                 "wait before reading pg_stat_database (idle backends flush within 10 s)")
      ->check(CLI::Range(0u, 120'000u));
  app.add_option("--body-ttl-ms", o.body_ttl_ms,
                 "re-sign a body older than this before sending it (the engine accepts +-300 s)")
      ->check(CLI::Range(1u, 290'000u));
  app.add_option("--prefill", o.prefill, "COPY N extra completed payments/orders/log rows first")
      ->check(CLI::Range(0u, 100'000'000u));
  app.add_option("--shuffle-seed", o.shuffle_seed, "seed of the delivery order");
  app.add_option("--engine-pid", o.engine_pid, "engine pid for RSS (default: the port's listener)");
  app.add_flag("--gateway", o.gateway,
               "act as a gateway that retries until ACKed: resend every 5xx and transport error "
               "with exponential backoff (bounded by --max-attempts and --timeout-s)");
  app.add_option("--max-backoff-ms", o.max_backoff_ms, "gateway: longest delay between resends")
      ->check(CLI::Range(1u, 60'000u));
  app.add_option("--before-check", o.before_check,
                 "shell command run after the load and before the checks; must exit 0 "
                 "(e.g. seatflow reconcile --once)");
  app.add_option("--hold-file", o.hold_file,
                 "after the load, create this file and wait (bounded by --timeout-s) until it is "
                 "removed before the checks: a chaos driver ends its faults first");
  app.add_option("--started-file", o.started_file,
                 "create this file when the seed is done and the first request is about to go: "
                 "a chaos driver starts its faults only then");
  app.add_flag("--lenient-duplicate-count", o.lenient_duplicates,
               "bound duplicate_count only above (for runs in which the engine was killed)");
  app.add_option("--proxy-resends", o.proxy_resends,
                 "a balancer between the load and the engines may resend each request this many "
                 "times more (HAProxy's retries): duplicate_count's upper bound grows with it "
                 "(the load's checks and --check-history)")
      ->check(CLI::Range(0, 10));
  app.add_option("--source-address", o.source_address,
                 "connect from this loopback address (e.g. 127.0.0.2), so the engine or a balancer "
                 "in front of it sees the load as another source than a load from 127.0.0.1")
      ->check(CLI::ValidIPV4);
  app.add_option("--history", o.history_path,
                 "write the history of the load to this file, replacing it (JSON lines: the run, "
                 "its payments as seeded, then every request sent with its answer or transport "
                 "error, appended as they happen)");
  app.add_option("--check-history", o.check_history_path,
                 "check a recorded history against the domain model and the stores, print each "
                 "oracle and its verdict, and exit (1 on a violation)");
  app.add_option("--stream", o.stream,
                 "--check-history: the event stream key (default $SEATFLOW_EVENT_STREAM or "
                 "seatflow:events; 'none' skips the stream oracle)");
  app.add_flag("--stream-lossy", o.stream_lossy,
               "--check-history: Redis lost its data during the run, so the stream may miss "
               "published events (it must still hold nothing else, in order)");
  app.add_flag("--events-partial", o.events_partial,
               "--check-history: the witness slot was made anew mid-run (a PostgreSQL "
               "failover), so it holds only later events: each payment's end statuses must be "
               "reachable from its seed by legal moves and the callbacks sent; no stream oracle");
}

std::string env_or(const std::string& value, const char* name) {
  if (!value.empty()) {
    return value;
  }
  const char* env = std::getenv(name);
  return env != nullptr ? env : "";
}

// Fills defaults from the environment and checks the combination; "" when usable.
std::string resolve_options(Options& o) {
  const bool engine = o.target == "seatflow";
  o.pg_dsn = env_or(o.pg_dsn, "SEATFLOW_PG_DSN");
  o.redis_url = env_or(o.redis_url, "SEATFLOW_REDIS_URL");
  if (o.secret.empty()) {
    const auto secrets = env_or({}, "SEATFLOW_CALLBACK_SECRETS");
    o.secret = secrets.substr(0, secrets.find(','));
  }
  if (o.secret.empty()) {
    if (engine) {
      return "--secret (or SEATFLOW_CALLBACK_SECRETS) is required";
    }
    // nginx does not verify; any key makes well-formed bodies of the same size.
    o.secret = "nginx-target-does-not-verify";
  }
  if (engine && (o.pg_dsn.empty() || o.redis_url.empty())) {
    return "--pg-dsn and --redis-url (or SEATFLOW_PG_DSN / SEATFLOW_REDIS_URL) are required for "
           "--target seatflow";
  }
  return {};
}

Plan build_plan(const Options& o) {
  PlanOptions options;
  options.scenario = o.scenario == "storm"   ? Scenario::storm
                     : o.scenario == "mixed" ? Scenario::mixed
                                             : Scenario::unique;
  options.payments = o.payments;
  options.duplicates = o.duplicates;
  options.shuffle_seed = o.shuffle_seed;
  return make_plan(options);
}

RunReport new_report(const Options& o, const Ids& ids, const Plan& plan) {
  RunReport report;
  report.scenario = o.scenario;
  report.target = o.target;
  report.url = o.url;
  report.run_prefix = ids.prefix();
  report.payments = o.payments;
  report.duplicates = plan.scenario == Scenario::storm ? o.duplicates : 1;
  report.connections = o.connections;
  report.rate_per_s = o.rate;
  report.distinct_callbacks = plan.callbacks.size();
  report.prefill_rows = o.prefill;
  return report;
}

// The engine's stores as seen around the load: connections and the counters read before it.
struct Stores {
  std::unique_ptr<pqxx::connection> pg;
  std::unique_ptr<RedisClient> redis;
  PgCounters pg_before;
  RedisCounters redis_before;
};

// Prefill and seed on a connection of their own, which is closed before the counters are read:
// a backend flushes its statistics when it exits.
void seed(const Options& o, const Ids& ids, const Plan& plan, RedisClient& redis,
          RunReport& report) {
  pqxx::connection conn(o.pg_dsn);
  if (o.prefill > 0) {
    std::cerr << "seatflow-bench: prefilling " << o.prefill << " completed payments...\n";
    std::string prefill_prefix(1, 'F');
    prefill_prefix += ids.prefix();
    report.prefill = prefill(conn, prefill_prefix, o.prefill);
  }
  report.seed = seed_plan(conn, redis, ids, plan);
  if (!o.no_vacuum) {
    vacuum_analyze(conn);
  }
  const auto waited = await_event_slot(conn, o.event_slot, std::chrono::seconds(o.timeout_s));
  if (!waited) {
    std::cerr << "seatflow-bench: warning: the event slot " << o.event_slot
              << " did not decode the seed's WAL within --timeout-s; the run shares the CPU with "
                 "that decoding\n";
  } else if (*waited >= 0.5) {
    std::cerr << "seatflow-bench: waited " << *waited
              << " s for the engine's event slot to decode the seed\n";
  }
}

void read_counters_before(const Options& o, Stores& stores) {
  std::string why;
  stores.pg = std::make_unique<pqxx::connection>(o.pg_dsn);
  stores.pg_before = read_pg_counters(*stores.pg);
  auto redis = read_redis_counters(*stores.redis, &why);
  if (!redis) {
    throw std::runtime_error("INFO failed: " + why);
  }
  stores.redis_before = std::move(*redis);
}

RedisDelta redis_delta(const RedisCounters& before, const RedisCounters& after) {
  RedisDelta delta;
  delta.calls = calls_delta(before, after);
  for (const auto& [name, calls] : delta.calls) {
    delta.total_calls += calls;
    if (name != "hget" && name != "hset" && name != "hdel") {
      delta.requests += calls;
    }
  }
  // Each probe runs two INFO commands; the "before" pair lands in the delta.
  delta.commands_processed = after.commands_processed - before.commands_processed;
  delta.commands_processed -= std::min<std::uint64_t>(delta.commands_processed, 2);
  return delta;
}

// After the load: let idle backends flush their statistics, read the deltas, check the end state.
void measure_after(const Options& o, const Ids& ids, const Plan& plan, Stores& stores,
                   RunReport& report) {
  if (!o.hold_file.empty()) {
    { std::ofstream(o.hold_file) << "load finished\n"; }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
    while (access(o.hold_file.c_str(), F_OK) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        throw std::runtime_error("--hold-file " + o.hold_file + " was not removed in time");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  if (o.stats_wait_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(o.stats_wait_ms));
  }
  if (o.gateway) {
    // The stores may have restarted under a chaos run: read on fresh connections.
    stores.pg = std::make_unique<pqxx::connection>(o.pg_dsn);
    stores.redis = connect_redis(o.redis_url);
  }
  const auto pg_after = read_pg_counters(*stores.pg);
  // The "before" probe's own commit lands in the delta.
  report.pg = PgDelta{pg_after.xact_commit - stores.pg_before.xact_commit - 1,
                      pg_after.xact_rollback - stores.pg_before.xact_rollback,
                      pg_after.next_xid - stores.pg_before.next_xid};
  std::string why;
  const auto redis_after = read_redis_counters(*stores.redis, &why);
  if (!redis_after) {
    throw std::runtime_error("INFO failed: " + why);
  }
  report.redis = redis_delta(stores.redis_before, *redis_after);
  if (!o.before_check.empty()) {
    std::fflush(stdout);
    const int rc = std::system(o.before_check.c_str());
    if (rc != 0) {
      throw std::runtime_error("--before-check command exited with " + std::to_string(rc));
    }
  }
  if (!o.no_check) {
    report.checks = check_invariants(*stores.pg, *stores.redis, ids, plan, report.load,
                                     o.lenient_duplicates, o.proxy_resends);
  }
}

ClientOptions client_options(const Options& o, const Target& target) {
  ClientOptions client;
  client.host = target.host;
  client.port = target.port;
  client.connections = o.connections;
  client.rate_per_s = o.rate;
  client.retry_503 = o.retry_503;
  client.max_attempts = o.max_attempts;
  client.retry_delay_ms = o.retry_delay_ms;
  client.request_timeout_ms = o.request_timeout_ms;
  client.deadline_s = o.timeout_s;
  client.body_ttl_ms = o.body_ttl_ms;
  client.progress = !o.no_progress && isatty(STDERR_FILENO) != 0;
  client.gateway = o.gateway;
  client.max_backoff_ms = o.max_backoff_ms;
  client.source_address = o.source_address;
  return client;
}

bool write_outputs(const Options& o, const RunReport& report) {
  print_table(report, stdout);
  if (o.json_path.empty()) {
    return true;
  }
  std::ofstream out(o.json_path);
  out << to_json(report).dump(2) << '\n';
  if (!out) {
    std::cerr << "seatflow-bench: cannot write " << o.json_path << '\n';
    return false;
  }
  return true;
}

// Opens the history, records the run and its payments as seeded, and computes each callback's
// business digest as the engine will (the channel's own verification of its body).
std::unique_ptr<HistoryWriter> start_history(const std::string& path,
                                             const seatflow::channels::HmacChannel& channel,
                                             const Ids& ids, const Plan& plan,
                                             std::vector<std::string>& digests) {
  auto writer = std::make_unique<HistoryWriter>(path);
  writer->run(ids.prefix());
  for (std::uint32_t i = 0; i < plan.payments.size(); ++i) {
    std::vector<std::string> seats;
    for (std::uint32_t s = 0; s < kSeatsPerOrder; ++s) {
      seats.push_back(ids.seat_id(i, s));
    }
    writer->payment({ids.payment_no(i), ids.order_no(i), ids.show_id(i), std::move(seats),
                     plan.payments[i].seed_payment_status, plan.payments[i].seed_order_status});
  }
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  digests.reserve(plan.callbacks.size());
  for (const auto& c : plan.callbacks) {
    const auto body = channel.signed_body(ids.callback_id(c.payment, c.sequence),
                                          ids.payment_no(c.payment), c.status, now_ms);
    const auto verified = channel.verify({body, nullptr, now_ms});
    if (!verified.ok()) {
      throw std::runtime_error("a planned callback does not verify");
    }
    digests.push_back(verified.value().payload_sha256);
  }
  return writer;
}

// --check-history: the oracles of a recorded history, printed one per line with their verdicts,
// then "history: ... violations=N".
int check_history_file(Options o) {
  o.pg_dsn = env_or(o.pg_dsn, "SEATFLOW_PG_DSN");
  o.redis_url = env_or(o.redis_url, "SEATFLOW_REDIS_URL");
  if (o.stream.empty()) {
    o.stream = env_or({}, "SEATFLOW_EVENT_STREAM");
  }
  if (o.stream.empty()) {
    o.stream = "seatflow:events";
  }
  if (o.pg_dsn.empty() || o.redis_url.empty()) {
    std::cerr << "seatflow-bench: --check-history needs --pg-dsn and --redis-url\n";
    return 2;
  }
  const auto history = read_history(o.check_history_path);
  pqxx::connection conn(o.pg_dsn);
  auto redis = connect_redis(o.redis_url);
  const auto snapshot = load_snapshot(conn, *redis, history, o.stream == "none" ? "" : o.stream);
  const auto report =
      check_history(history, snapshot, {o.stream_lossy, o.events_partial, o.proxy_resends});
  std::size_t violations = 0;
  for (const auto& item : report.items) {
    std::cout << "  " << (item.ok ? "ok   " : "FAIL ") << item.name << ": " << item.detail << '\n';
    violations += item.ok ? 0 : 1;
  }
  std::cout << "history: run " << history.run_prefix << " exchanges=" << history.exchanges.size()
            << " violations=" << violations << '\n';
  return violations == 0 ? 0 : 1;
}

int run(Options o) {
  if (!o.check_history_path.empty()) {
    return check_history_file(o);
  }
  std::string why;
  std::vector<Target> targets;
  for (std::size_t start = 0; start <= o.url.size();) {
    const auto comma = std::min(o.url.find(',', start), o.url.size());
    const auto url = o.url.substr(start, comma - start);
    start = comma + 1;
    const auto parsed = parse_loopback_url(url, &why);
    if (!parsed) {
      std::cerr << "seatflow-bench: --url " << url << ": " << why << '\n';
      return 2;
    }
    targets.push_back(*parsed);
  }
  const auto target = std::optional<Target>(targets.front());
  if (const auto error = resolve_options(o); !error.empty()) {
    std::cerr << "seatflow-bench: " << error << '\n';
    return 2;
  }
  const bool engine = o.target == "seatflow";
  const Plan plan = build_plan(o);
  const Ids ids(o.run_prefix.empty() ? make_run_prefix() : o.run_prefix);
  RunReport report = new_report(o, ids, plan);

  Stores stores;
  try {
    if (engine) {
      stores.redis = connect_redis(o.redis_url);
      if (!o.no_seed) {
        seed(o, ids, plan, *stores.redis, report);
      }
      if (o.seed_only) {
        std::cout << ids.prefix() << '\n';
        return 0;
      }
      if (!o.bodies_path.empty()) {
        return write_bodies(o, ids, plan) ? 0 : 1;
      }
      read_counters_before(o, stores);
    }
  } catch (const std::exception& e) {
    std::cerr << "seatflow-bench: setup failed: " << e.what() << '\n';
    return 1;
  }
  report.engine_pid = o.engine_pid > 0 ? o.engine_pid
                      : engine         ? find_listener_pid(target->port).value_or(0)
                                       : 0;

  const seatflow::channels::HmacChannel channel(
      seatflow::channels::HmacConfig{{o.secret}, 300'000});
  auto client = client_options(o, *target);
  for (std::size_t i = 1; i < targets.size(); ++i) {
    client.extra_targets.emplace_back(targets[i].host, targets[i].port);
  }
  std::unique_ptr<HistoryWriter> history;
  std::vector<std::string> digests;
  if (!o.history_path.empty()) {
    history = start_history(o.history_path, channel, ids, plan, digests);
    client.on_exchange = [&history, &digests, &ids, &plan](std::uint32_t cb, std::int64_t sent_ms,
                                                           std::int64_t answer_ms, int http) {
      const auto& c = plan.callbacks[cb];
      history->exchange({ids.callback_id(c.payment, c.sequence), ids.payment_no(c.payment),
                         c.status, digests[cb], sent_ms, answer_ms, http});
    };
  }
  if (!o.started_file.empty()) {
    std::ofstream(o.started_file) << "load started\n";
  }
  report.load = run_load(plan, client, make_encoder(channel, ids, plan, *target));

  if (report.engine_pid > 0) {
    report.engine_memory = read_process_memory(report.engine_pid);
  }
  if (engine) {
    try {
      measure_after(o, ids, plan, stores, report);
    } catch (const std::exception& e) {
      report.error = std::string("after the load: ") + e.what();
    }
  }
  if (!write_outputs(o, report)) {
    return 1;
  }
  return report.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "seatflow-bench: acts as the payment gateway against a loopback SeatFlow (or nginx):\n"
      "seeds its own payments, sends signed callbacks, reports rates and latency, checks the end "
      "state."};
  Options options;
  add_cli(app, options);
  CLI11_PARSE(app, argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::cerr << "seatflow-bench: " << e.what() << '\n';
    return 1;
  }
}

// Real-store test helpers: migrations applied once per process, ids unique per test, clean-up.
#include "support/stores.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

#include "codec/digest.hpp"
#include "persistence/jobs/event_relay.hpp"
#include "persistence/stores/events.hpp"
#include "persistence/stores/migrations.hpp"

namespace seatflow::testing {
namespace {

// A store connection that the call watchdog shut down, or that its peer closed, makes hiredis's
// next write() raise SIGPIPE; the engine ignores it (app/main.cpp) and sees EPIPE, and so must
// every test binary that runs the stores' code (each links this file through Stores).
const bool kSigpipeIgnored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();

std::string required_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    ADD_FAILURE() << name << " is not set: run the suite through ./test.sh, which starts the "
                  << "throwaway PostgreSQL and Redis servers";
    return {};
  }
  return value;
}

std::string random_prefix() {
  static std::mutex mutex;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard lock(mutex);
  constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out = "t";
  for (int i = 0; i < 10; ++i) {
    out.push_back(kAlphabet[rng() % (sizeof(kAlphabet) - 1)]);
  }
  return out;
}

void ensure_schema(pqxx::connection& conn) {
  static std::once_flag once;
  std::call_once(once, [&] {
    (void)persistence::ensure_event_slot(conn, std::string(persistence::events::kDefaultSlot),
                                         nullptr);
    (void)persistence::apply_migrations(conn);
    (void)persistence::bind_event_slot(conn, std::string(persistence::events::kDefaultSlot));
  });
}

// A temporary logical slot on `conn` (dropped with the session) from which events are peeked.
std::string create_tap(pqxx::connection& conn, const std::string& prefix) {
  const auto slot = "tap_" + prefix;
  pqxx::nontransaction tx(conn);
  tx.exec_params("SELECT pg_create_logical_replication_slot($1, 'pgoutput', true)", slot);
  return slot;
}

std::string array_literal(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "\"" : ",\"") + items[i] + "\"";
  }
  return out + "}";
}

}  // namespace

std::string test_pg_dsn() {
  return required_env("SEATFLOW_TEST_PG_DSN");
}
std::string test_redis_url() {
  return required_env("SEATFLOW_TEST_REDIS_URL");
}

persistence::RedisEndpoint test_redis_endpoint() {
  const auto endpoint = persistence::parse_redis_url(test_redis_url());
  EXPECT_TRUE(endpoint.ok()) << endpoint.detail();
  return endpoint.ok() ? endpoint.value() : persistence::RedisEndpoint{};
}

Stores::Stores()
    : prefix_(random_prefix()),
      pg_(std::make_unique<pqxx::connection>(test_pg_dsn())),
      redis_(std::make_unique<persistence::RedisClient>(test_redis_endpoint(), 2000, nullptr)) {
  ensure_schema(*pg_);
  tap_ = std::make_unique<pqxx::connection>(test_pg_dsn());
  tap_slot_ = create_tap(*tap_, prefix_);
}

Stores::Stores(const std::string& pg_dsn)
    : prefix_(random_prefix()),
      pg_(std::make_unique<pqxx::connection>(pg_dsn)),
      redis_(std::make_unique<persistence::RedisClient>(test_redis_endpoint(), 2000, nullptr)) {
  (void)persistence::apply_migrations(*pg_);
  tap_ = std::make_unique<pqxx::connection>(pg_dsn);
  tap_slot_ = create_tap(*tap_, prefix_);
}

Stores::~Stores() {
  try {
    pqxx::work tx(*pg_);
    const auto like = prefix_ + "%";
    tx.exec_params("DELETE FROM payment_callback_log WHERE payment_no LIKE $1", like);
    tx.exec_params("DELETE FROM payment_discrepancy WHERE payment_no LIKE $1", like);
    tx.exec_params("DELETE FROM seat_claim WHERE order_no LIKE $1", like);
    tx.exec_params("DELETE FROM payment_query WHERE payment_no LIKE $1", like);
    tx.exec_params("DELETE FROM refund WHERE payment_no LIKE $1", like);
    tx.exec_params("DELETE FROM payment_order WHERE payment_no LIKE $1", like);
    tx.exec_params("DELETE FROM order_info WHERE order_no LIKE $1", like);
    tx.commit();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "clean-up failed: " << e.what();
  }
  for (const auto& show : shows_) {
    (void)redis_->command({"DEL", "seatflow:seats:{" + show + "}"});
  }
}

namespace {

std::vector<EventRow> filter_events(std::vector<EventRow> all, const std::string& a,
                                    const std::string& b, bool by_prefix) {
  std::vector<EventRow> out;
  const auto match = [&](const std::string& value) {
    return !value.empty() && (by_prefix ? value.rfind(a, 0) == 0 : (value == a || value == b));
  };
  for (auto& event : all) {
    if (match(event.payment_no) || match(event.order_no)) {
      out.push_back(std::move(event));
    }
  }
  return out;
}

}  // namespace

std::vector<EventRow> peek_events(pqxx::connection& conn, const std::string& slot) {
  std::vector<EventRow> out;
  pqxx::nontransaction tx(conn);
  const auto rows = tx.exec_params(
      "SELECT data FROM pg_logical_slot_peek_binary_changes($1, NULL, NULL, "
      "  'proto_version', '1', 'publication_names', $2, 'messages', 'true')",
      slot, std::string(persistence::events::kPublication));
  for (const auto& row : rows) {
    const pqxx::binarystring bytes(row[0]);
    const auto change = persistence::events::parse_pgoutput(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    EXPECT_TRUE(change.has_value()) << "an undecodable slot row";
    if (!change || change->kind != persistence::events::WalChange::Kind::message ||
        change->prefix != persistence::events::kMessagePrefix) {
      continue;
    }
    const auto events = persistence::events::message_events(change->content);
    EXPECT_TRUE(events.has_value()) << change->content;
    if (!events) {
      continue;
    }
    for (const auto& fields : *events) {
      EventRow event;
      event.seq = static_cast<std::int64_t>(out.size()) + 1;
      for (const auto& [name, value] : fields) {
        if (name == "event_id") {
          event.event_id = value;
        } else if (name == "type") {
          event.type = value;
        } else if (name == "payment_no") {
          event.payment_no = value;
        } else if (name == "order_no") {
          event.order_no = value;
        } else if (name == "amount_cents") {
          event.amount_cents = std::stoll(value);
        } else if (name == "detail") {
          event.detail = value;
        } else if (name == "occurred_at") {
          event.occurred_at = value;
        }
      }
      out.push_back(std::move(event));
    }
  }
  return out;
}

std::vector<EventRow> Stores::events(const std::string& payment_no, const std::string& order_no) {
  return filter_events(peek_events(*tap_, tap_slot_), payment_no,
                       order_no.empty() ? payment_no : order_no, false);
}

std::vector<EventRow> Stores::all_events() {
  return filter_events(peek_events(*tap_, tap_slot_), prefix_ + "-", {}, true);
}

std::vector<std::string> Stores::event_ids(const std::string& payment_no,
                                           const std::string& order_no) {
  std::vector<std::string> ids;
  for (const auto& event : events(payment_no, order_no)) {
    ids.push_back(event.event_id);
  }
  return ids;
}

PrivateDatabase::PrivateDatabase(int migrate_to) : name_("seatflow_" + random_prefix()) {
  const auto base = test_pg_dsn();
  pqxx::connection conn(base);
  pqxx::nontransaction tx(conn);
  tx.exec("CREATE DATABASE " + name_);
  // postgresql://user@host:port/db[?params]: swap the database name.
  const auto query = base.find('?');
  const auto slash = base.rfind('/', query == std::string::npos ? base.size() : query);
  dsn_ = base.substr(0, slash + 1) + name_ +
         (query == std::string::npos ? std::string() : base.substr(query));
  pqxx::connection fresh(dsn_);
  slot_ = name_ + "_events";
  (void)persistence::ensure_event_slot(fresh, slot_, nullptr);
  (void)persistence::apply_migrations(fresh, migrate_to);
  (void)persistence::bind_event_slot(fresh, slot_);
}

PrivateDatabase::~PrivateDatabase() {
  // A relay that just stopped may leave its walsender a moment longer: the slot is still active
  // then, so the drop is tried again after waiting for it.
  for (int attempt = 1;; ++attempt) {
    try {
      pqxx::connection conn(test_pg_dsn());
      pqxx::nontransaction tx(conn);
      // A database with a slot cannot be dropped; FORCE ends the sessions that use it first.
      // pg_terminate_backend waits (up to 5 s) until the walsender is gone.
      tx.exec(
          "SELECT pg_terminate_backend(active_pid, 5000) FROM pg_replication_slots "
          "WHERE database = " +
          tx.quote(name_) + " AND active_pid IS NOT NULL");
      tx.exec(
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
          "WHERE database = " +
          tx.quote(name_) + " AND NOT temporary");
      tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
      return;
    } catch (const std::exception& e) {
      if (attempt >= 5) {
        ADD_FAILURE() << "dropping " << name_ << " failed: " << e.what();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
}

std::string Stores::id(const std::string& name) const {
  return prefix_ + "-" + name;
}

void Stores::create_order(const std::string& order_no, const std::string& show_id,
                          const std::vector<std::string>& seats, std::int64_t amount_cents,
                          int status) {
  pqxx::work tx(*pg_);
  tx.exec_params(
      "INSERT INTO order_info (order_no, user_id, show_id, seat_ids, amount_cents, status, "
      "expires_at) VALUES ($1, 'user-1', $2, $3::text[], $4, $5, now() + interval '15 minutes')",
      order_no, show_id, array_literal(seats), amount_cents, status);
  // A live order holds its seat claims, as the orders API makes it (SPEC §9); a seat another
  // order of the test claimed first stays that order's.
  if (status == 0 || status == 1) {
    tx.exec_params(
        "INSERT INTO seat_claim (show_id, seat_id, order_no) SELECT $1, s, $2 "
        "FROM unnest($3::text[]) AS s ON CONFLICT DO NOTHING",
        show_id, order_no, array_literal(seats));
  }
  tx.commit();
  shows_.push_back(show_id);
  if (status == 0) {
    for (const auto& seat_id : seats) {
      set_seat(show_id, seat_id, "1:" + order_no);
    }
  }
}

void Stores::create_payment(const std::string& payment_no, const std::string& order_no,
                            const std::string& channel, std::int64_t amount_cents, int status) {
  pqxx::work tx(*pg_);
  tx.exec_params(
      "INSERT INTO payment_order (payment_no, order_no, channel, amount_cents, status) "
      "VALUES ($1, $2, $3, $4, $5)",
      payment_no, order_no, channel, amount_cents, status);
  tx.commit();
}

void Stores::create_pending(const std::string& payment_no, const std::string& order_no,
                            const std::string& show_id, const std::vector<std::string>& seats,
                            std::int64_t amount_cents, const std::string& channel) {
  create_order(order_no, show_id, seats, amount_cents);
  create_payment(payment_no, order_no, channel, amount_cents);
}

int Stores::payment_status(const std::string& payment_no) {
  pqxx::work tx(*pg_);
  return tx.exec_params1("SELECT status FROM payment_order WHERE payment_no = $1", payment_no)[0]
      .as<int>();
}

bool Stores::payment_paid_at_set(const std::string& payment_no) {
  pqxx::work tx(*pg_);
  return tx
      .exec_params1("SELECT paid_at IS NOT NULL FROM payment_order WHERE payment_no = $1",
                    payment_no)[0]
      .as<bool>();
}

std::optional<std::string> Stores::channel_trade_no(const std::string& payment_no) {
  pqxx::work tx(*pg_);
  const auto row = tx.exec_params1(
      "SELECT channel_trade_no FROM payment_order WHERE payment_no = $1", payment_no);
  if (row[0].is_null()) {
    return std::nullopt;
  }
  return row[0].as<std::string>();
}

int Stores::order_status(const std::string& order_no) {
  pqxx::work tx(*pg_);
  return tx.exec_params1("SELECT status FROM order_info WHERE order_no = $1", order_no)[0]
      .as<int>();
}

std::optional<LogRow> Stores::log_row(const std::string& callback_id) {
  pqxx::work tx(*pg_);
  const auto rows = tx.exec_params(
      "SELECT duplicate_count, status, payload_sha256 FROM payment_callback_log "
      "WHERE callback_id = $1",
      callback_id);
  if (rows.empty()) {
    return std::nullopt;
  }
  return LogRow{rows[0][0].as<int>(), rows[0][1].as<int>(), rows[0][2].as<std::string>()};
}

int Stores::await_duplicate_count(const std::string& callback_id, int expected) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int seen = -1;
  while (true) {
    const auto row = log_row(callback_id);
    seen = row ? row->duplicate_count : -1;
    if (seen == expected || std::chrono::steady_clock::now() > deadline) {
      return seen;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
}

int Stores::log_rows_for_payment(const std::string& payment_no) {
  pqxx::work tx(*pg_);
  return tx
      .exec_params1("SELECT count(*) FROM payment_callback_log WHERE payment_no = $1",
                    payment_no)[0]
      .as<int>();
}

int Stores::discrepancies(const std::string& payment_no, const std::string& kind) {
  pqxx::work tx(*pg_);
  return tx
      .exec_params1("SELECT count(*) FROM payment_discrepancy WHERE payment_no = $1 AND kind = $2",
                    payment_no, kind)[0]
      .as<int>();
}

std::string Stores::seat(const std::string& show_id, const std::string& seat_id) {
  const auto reply = redis_->command({"HGET", "seatflow:seats:{" + show_id + "}", seat_id});
  EXPECT_TRUE(reply.ok) << reply.error;
  return reply.is_nil ? std::string{} : reply.str;
}

void Stores::set_seat(const std::string& show_id, const std::string& seat_id,
                      const std::string& value) {
  const auto reply = redis_->command({"HSET", "seatflow:seats:{" + show_id + "}", seat_id, value});
  EXPECT_TRUE(reply.ok) << reply.error;
  shows_.push_back(show_id);
}

void Stores::delete_seat(const std::string& show_id, const std::string& seat_id) {
  const auto reply = redis_->command({"HDEL", "seatflow:seats:{" + show_id + "}", seat_id});
  EXPECT_TRUE(reply.ok) << reply.error;
}

domain::VerifiedCallback make_callback(const std::string& callback_id,
                                       const std::string& payment_no, domain::CallbackKind kind,
                                       std::optional<std::int64_t> amount,
                                       const std::string& trade_no, domain::Channel channel) {
  domain::VerifiedCallback callback;
  callback.callback_id = callback_id;
  callback.payment_no = payment_no;
  callback.channel = channel;
  callback.kind = kind;
  callback.amount_cents = amount;
  callback.channel_trade_no = trade_no;
  callback.payload_sha256 = codec::business_digest(callback);
  return callback;
}

persistence::Result<std::int64_t> mark_sold(persistence::SeatStore& store, std::string_view show_id,
                                            std::string_view order_no,
                                            const std::vector<std::string>& seats) {
  auto sold = store.sell({persistence::SeatSale{show_id, order_no, &seats}});
  if (!sold.ok()) {
    return std::move(sold).failure();
  }
  if (sold.value().empty()) {
    return std::int64_t{0};
  }
  const auto& refusal = sold.value().front();
  return persistence::refused(persistence::errc::conflict,
                              "seat " + refusal.seat_id + " is held as " + refusal.holder,
                              {"seatId", refusal.seat_id});
}

}  // namespace seatflow::testing

// Test access to the real PostgreSQL and Redis started by ./test.sh: schema from the real
// migrations, unique ids per test, seeding and inspection helpers, clean-up of what a test made.
#pragma once

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "domain/types.hpp"
#include "persistence/drivers/redis.hpp"
#include "persistence/stores/seat_scripts.hpp"

namespace seatflow::testing {

// SEATFLOW_TEST_PG_DSN / SEATFLOW_TEST_REDIS_URL; the test fails when they are unset.
[[nodiscard]] std::string test_pg_dsn();
[[nodiscard]] std::string test_redis_url();
[[nodiscard]] persistence::RedisEndpoint test_redis_endpoint();

struct LogRow {
  int duplicate_count = 0;
  int status = 0;
  std::string payload_sha256;
};

// One payment event, as its WAL message carries it.
struct EventRow {
  std::int64_t seq = 0;  // its place in commit order among the events read together
  std::string event_id;
  std::string type;
  std::string payment_no;          // "" when NULL
  std::string order_no;            // "" when NULL
  std::int64_t amount_cents = -1;  // -1 when NULL
  std::string detail;              // "" when NULL
  std::string occurred_at;
};

// The event messages of the logical replication slot `slot` that it has not confirmed, in commit
// order (pgoutput through SQL; a peek consumes nothing).
[[nodiscard]] std::vector<EventRow> peek_events(pqxx::connection& conn, const std::string& slot);

// A database of its own on the test server, migrated, dropped in the destructor: for tests whose
// subject works on the whole outbox (the relay, retention) and must not see other tests' rows.
class PrivateDatabase {
 public:
  // Migrated to the newest version, or only up to `migrate_to` (to test a later migration on data
  // made before it).
  explicit PrivateDatabase(int migrate_to = std::numeric_limits<int>::max());
  ~PrivateDatabase();
  PrivateDatabase(const PrivateDatabase&) = delete;
  PrivateDatabase& operator=(const PrivateDatabase&) = delete;
  [[nodiscard]] const std::string& dsn() const { return dsn_; }
  // The database's event slot (SEATFLOW_EVENT_SLOT of an engine on it): slot names are
  // per-server, so each private database has its own.
  [[nodiscard]] const std::string& slot() const { return slot_; }

 private:
  std::string name_;
  std::string dsn_;
  std::string slot_;
};

// Seeds and inspects rows and seats; every id it makes starts with a prefix unique to the test,
// and the destructor deletes them, so tests may run in parallel against one database.
class Stores {
 public:
  Stores();
  // Works on the database at `pg_dsn` (migrated first) instead of the shared test database.
  explicit Stores(const std::string& pg_dsn);
  ~Stores();
  Stores(const Stores&) = delete;
  Stores& operator=(const Stores&) = delete;

  // "<prefix>-<name>": an id unique to this test.
  [[nodiscard]] std::string id(const std::string& name) const;
  [[nodiscard]] const std::string& prefix() const { return prefix_; }

  // An order (status 0 unless given) whose seats are locked `1:<order>` in Redis when pending and
  // claimed in seat_claim when live (pending or paid; a seat already claimed is left as it is).
  void create_order(const std::string& order_no, const std::string& show_id,
                    const std::vector<std::string>& seats, std::int64_t amount_cents,
                    int status = 0);
  void create_payment(const std::string& payment_no, const std::string& order_no,
                      const std::string& channel, std::int64_t amount_cents, int status = 0);
  // Order + payment + locked seats in one call; returns nothing, ids are the ones given.
  void create_pending(const std::string& payment_no, const std::string& order_no,
                      const std::string& show_id, const std::vector<std::string>& seats,
                      std::int64_t amount_cents = 5000, const std::string& channel = "hmac");

  [[nodiscard]] int payment_status(const std::string& payment_no);
  [[nodiscard]] bool payment_paid_at_set(const std::string& payment_no);
  [[nodiscard]] std::optional<std::string> channel_trade_no(const std::string& payment_no);
  [[nodiscard]] int order_status(const std::string& order_no);
  [[nodiscard]] std::optional<LogRow> log_row(const std::string& callback_id);
  [[nodiscard]] int log_rows_for_payment(const std::string& payment_no);
  // Duplicates answered from an engine's memory reach the row at its next flush (about 1 s):
  // polls until the count equals `expected` or 5 s pass, and returns the last count seen.
  [[nodiscard]] int await_duplicate_count(const std::string& callback_id, int expected);
  [[nodiscard]] int discrepancies(const std::string& payment_no, const std::string& kind);
  // The seat's value in Redis ("" when the field is absent).
  [[nodiscard]] std::string seat(const std::string& show_id, const std::string& seat_id);
  void set_seat(const std::string& show_id, const std::string& seat_id, const std::string& value);
  void delete_seat(const std::string& show_id, const std::string& seat_id);

  // Events are read from a temporary slot this object creates first (so relays that confirm the
  // database's own slot do not hide them): the events committed since then.
  // The events whose payment_no or order_no is one of those given, in commit order.
  [[nodiscard]] std::vector<EventRow> events(const std::string& payment_no,
                                             const std::string& order_no = {});
  // Every event of this test (payment or order number under its prefix), in commit order.
  [[nodiscard]] std::vector<EventRow> all_events();
  // Just the event ids of events(payment_no, order_no), in commit order.
  [[nodiscard]] std::vector<std::string> event_ids(const std::string& payment_no,
                                                   const std::string& order_no = {});

  [[nodiscard]] pqxx::connection& pg() { return *pg_; }
  [[nodiscard]] persistence::RedisClient& redis() { return *redis_; }

 private:
  std::string prefix_;
  std::unique_ptr<pqxx::connection> pg_;
  std::unique_ptr<pqxx::connection> tap_;  // holds the temporary slot tap_slot_
  std::string tap_slot_;
  std::unique_ptr<persistence::RedisClient> redis_;
  std::vector<std::string> shows_;
};

// mark_sold for one order (SeatStore::sell with one sale), answered as SeatStore::lock answers:
// 0, or errc::conflict naming the refused seat ("seatId", its holder in the detail).
[[nodiscard]] persistence::Result<std::int64_t> mark_sold(persistence::SeatStore& store,
                                                          std::string_view show_id,
                                                          std::string_view order_no,
                                                          const std::vector<std::string>& seats);

// A verified callback as a channel would produce it (digest included).
[[nodiscard]] domain::VerifiedCallback make_callback(
    const std::string& callback_id, const std::string& payment_no, domain::CallbackKind kind,
    std::optional<std::int64_t> amount = {}, const std::string& trade_no = {},
    domain::Channel channel = domain::Channel::hmac);

}  // namespace seatflow::testing

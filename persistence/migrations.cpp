// The schema, one migration per version; never edit an applied migration, add a new one.
#include "persistence/migrations.hpp"

#include <string>

namespace seatflow::persistence {
namespace {

constexpr std::string_view kV1Schema = R"sql(
CREATE TABLE order_info (
  order_no     TEXT PRIMARY KEY,
  user_id      TEXT,
  show_id      TEXT NOT NULL,
  seat_ids     TEXT[] NOT NULL,
  amount_cents BIGINT NOT NULL CHECK (amount_cents >= 0),
  status       SMALLINT NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 3),
  expires_at   TIMESTAMPTZ,
  paid_at      TIMESTAMPTZ,
  created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- The timeout sweeper scans pending orders by expiry.
CREATE INDEX order_info_pending_expiry_idx ON order_info (expires_at) WHERE status = 0;

CREATE TABLE payment_order (
  payment_no       TEXT PRIMARY KEY,
  order_no         TEXT NOT NULL UNIQUE REFERENCES order_info (order_no),
  channel          TEXT NOT NULL CHECK (channel IN ('hmac', 'alipay', 'wechat')),
  amount_cents     BIGINT NOT NULL CHECK (amount_cents >= 0),
  status           SMALLINT NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 4),
  channel_trade_no TEXT,
  paid_at          TIMESTAMPTZ,
  created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (channel, channel_trade_no)
);

CREATE TABLE payment_callback_log (
  callback_id       TEXT PRIMARY KEY,
  channel           TEXT,
  payment_no        TEXT,
  status            SMALLINT,
  payload_sha256    TEXT NOT NULL,
  received_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  duplicate_count   INT NOT NULL DEFAULT 0,
  last_duplicate_at TIMESTAMPTZ
);
CREATE INDEX payment_callback_log_payment_idx ON payment_callback_log (payment_no);
-- Retention removes old rows by age.
CREATE INDEX payment_callback_log_received_idx ON payment_callback_log (received_at);

CREATE TABLE payment_discrepancy (
  id          BIGSERIAL PRIMARY KEY,
  payment_no  TEXT NOT NULL,
  order_no    TEXT,
  kind        TEXT NOT NULL,
  detail      JSONB NOT NULL DEFAULT '{}'::jsonb,
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  resolved_at TIMESTAMPTZ
);
-- At most one open row per (payment_no, kind).
CREATE UNIQUE INDEX payment_discrepancy_open_idx
  ON payment_discrepancy (payment_no, kind) WHERE resolved_at IS NULL;
CREATE INDEX payment_discrepancy_created_idx ON payment_discrepancy (created_at);
)sql";

// The transactional outbox: one row per state move, written in the move's own transaction and
// relayed to a Redis Stream (docs/ARCHITECTURE.md, "Payment events"). event_id is derived from the
// move itself (each move happens at most once per payment), so a replay can never add a second row.
constexpr std::string_view kV2PaymentEvents = R"sql(
CREATE TABLE payment_event (
  seq          BIGSERIAL PRIMARY KEY,
  event_id     TEXT NOT NULL UNIQUE,
  type         TEXT NOT NULL,
  payment_no   TEXT,
  order_no     TEXT,
  amount_cents BIGINT,
  detail       TEXT,
  occurred_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  published_at TIMESTAMPTZ
);
-- The relay reads unpublished rows in seq order; published rows leave this index.
CREATE INDEX payment_event_unpublished_idx ON payment_event (seq) WHERE published_at IS NULL;
-- Retention removes published rows by age; rows enter this index only when the relay marks them.
CREATE INDEX payment_event_published_idx ON payment_event (published_at)
  WHERE published_at IS NOT NULL;
)sql";

// SPEC §11: payments may be made through the stripe and standard dialects too. Migration 1 named
// its CHECK constraint implicitly; PostgreSQL calls it payment_order_channel_check.
constexpr std::string_view kV4StripeStandardChannels = R"sql(
ALTER TABLE payment_order DROP CONSTRAINT payment_order_channel_check;
ALTER TABLE payment_order ADD CONSTRAINT payment_order_channel_check
  CHECK (channel IN ('hmac', 'alipay', 'wechat', 'stripe', 'standard'));
)sql";

// An arbitrary constant that names SeatFlow's migration lock.
constexpr long long kMigrationLockKey = 0x5EA7F10;

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> all = {
      {1, "payments, orders, callback log, discrepancies", kV1Schema},
      {2, "payment event outbox", kV2PaymentEvents},
      // Version 3 is taken by another branch's migration; versions need only increase.
      {4, "stripe and standard channels", kV4StripeStandardChannels},
  };
  return all;
}

MigrationReport apply_migrations(pqxx::connection& conn) {
  MigrationReport report;
  {
    // The lock comes first: CREATE TABLE IF NOT EXISTS alone races with itself across sessions.
    pqxx::work tx(conn);
    tx.exec("SELECT pg_advisory_xact_lock(" + std::to_string(kMigrationLockKey) + ")");
    tx.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "  version INT PRIMARY KEY, name TEXT NOT NULL,"
        "  applied_at TIMESTAMPTZ NOT NULL DEFAULT now())");
    tx.commit();
  }
  for (const auto& migration : migrations()) {
    pqxx::work tx(conn);
    tx.exec("SELECT pg_advisory_xact_lock(" + std::to_string(kMigrationLockKey) + ")");
    const auto current =
        tx.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0].as<int>();
    if (report.applied.empty()) {
      report.from_version = current;
    }
    report.to_version = std::max(current, report.to_version);
    // Each version is looked up by itself, not compared with the highest applied one: a version
    // merged in below one already applied (3 after 4) is still applied, once.
    const bool applied =
        tx.exec_params1("SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)",
                        migration.version)[0]
            .as<bool>();
    if (applied) {
      continue;
    }
    tx.exec(std::string(migration.sql));
    tx.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                   migration.version, std::string(migration.name));
    tx.commit();
    report.applied.push_back(migration.version);
    report.to_version = std::max(report.to_version, migration.version);
  }
  return report;
}

}  // namespace seatflow::persistence

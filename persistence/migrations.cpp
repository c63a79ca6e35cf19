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

// Seat claims (SPEC §9): PostgreSQL decides who holds a seat, Redis is the fast path. The backfill
// gives each seat listed by a live (PENDING or PAID) order to one of them: a PAID order before a
// PENDING one (money was taken for it, and its seat is the one Redis has sold), then the older by
// created_at. Every other live order that lists the seat keeps its row but gets no claim; one with
// a payment gets one seat_conflict discrepancy (and its discrepancy.recorded event) naming its
// seats and their holders. One with no payment yet has taken no money, so it has no discrepancy
// (whose payment_no is required): the report counts it, `seatflow check` lists it, and the orders
// API refuses it a payment. Everything is set-based in the migration's one transaction, so it
// cannot stop half-way, and the report query says what it found.
constexpr std::string_view kV3SeatClaims = R"sql(
CREATE TABLE seat_claim (
  show_id    TEXT NOT NULL,
  seat_id    TEXT NOT NULL,
  order_no   TEXT NOT NULL REFERENCES order_info (order_no),
  claimed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (show_id, seat_id)
);
-- Close, refund, the sweeper and the reconciler find an order's claims; the foreign key's checks
-- on order_info deletes use it too.
CREATE INDEX seat_claim_order_idx ON seat_claim (order_no);

CREATE TEMPORARY TABLE seat_claim_backfill ON COMMIT DROP AS
SELECT o.show_id, s.seat_id, o.order_no, o.created_at,
       row_number() OVER (PARTITION BY o.show_id, s.seat_id
                          ORDER BY (o.status = 1) DESC, o.created_at, o.order_no) AS rank
FROM order_info o CROSS JOIN LATERAL unnest(o.seat_ids) AS s (seat_id)
WHERE o.status IN (0, 1);

INSERT INTO seat_claim (show_id, seat_id, order_no, claimed_at)
SELECT show_id, seat_id, order_no, created_at FROM seat_claim_backfill WHERE rank = 1;

WITH lost AS (
  SELECT b.order_no, b.show_id,
         jsonb_agg(jsonb_build_object('seat_id', b.seat_id, 'holder', c.order_no)
                   ORDER BY b.seat_id) AS seats
  FROM seat_claim_backfill b
  JOIN seat_claim c ON c.show_id = b.show_id AND c.seat_id = b.seat_id
  WHERE b.rank > 1
  GROUP BY b.order_no, b.show_id
), recorded AS (
  INSERT INTO payment_discrepancy AS d (payment_no, order_no, kind, detail)
  SELECT p.payment_no, l.order_no, 'seat_conflict',
         jsonb_build_object('show_id', l.show_id, 'seats', l.seats, 'source', 'migration 3')
  FROM lost l JOIN payment_order p ON p.order_no = l.order_no
  ON CONFLICT (payment_no, kind) WHERE resolved_at IS NULL DO NOTHING
  RETURNING d.id, d.payment_no, d.order_no, d.kind
)
INSERT INTO payment_event (event_id, type, payment_no, order_no, amount_cents, detail)
SELECT 'discrepancy.recorded:' || r.id, 'discrepancy.recorded', r.payment_no, r.order_no,
       (SELECT p.amount_cents FROM payment_order p WHERE p.payment_no = r.payment_no), r.kind
FROM recorded r
ON CONFLICT (event_id) DO NOTHING;
)sql";

// What migration 3 found, read in its transaction before the temporary table goes.
constexpr std::string_view kV3Report = R"sql(
SELECT format('seat claims: %s seats of %s live orders claimed; %s seats listed by more than one '
              'live order; %s orders left without a claim on them: %s with a payment, recorded '
              'as seat_conflict, %s without one',
              (SELECT count(*) FROM seat_claim_backfill WHERE rank = 1),
              (SELECT count(DISTINCT order_no) FROM seat_claim_backfill WHERE rank = 1),
              (SELECT count(*) FROM (SELECT DISTINCT show_id, seat_id FROM seat_claim_backfill
                                     WHERE rank > 1) s),
              (SELECT count(DISTINCT order_no) FROM seat_claim_backfill WHERE rank > 1),
              (SELECT count(DISTINCT b.order_no) FROM seat_claim_backfill b
               JOIN payment_order p ON p.order_no = b.order_no WHERE b.rank > 1),
              (SELECT count(DISTINCT b.order_no) FROM seat_claim_backfill b
               WHERE b.rank > 1 AND NOT EXISTS (SELECT 1 FROM payment_order p
                                                WHERE p.order_no = b.order_no)))
)sql";

// SPEC §11: payments may be made through the stripe and standard dialects too. Migration 1 named
// its CHECK constraint implicitly; PostgreSQL calls it payment_order_channel_check.
constexpr std::string_view kV4StripeStandardChannels = R"sql(
ALTER TABLE payment_order DROP CONSTRAINT payment_order_channel_check;
ALTER TABLE payment_order ADD CONSTRAINT payment_order_channel_check
  CHECK (channel IN ('hmac', 'alipay', 'wechat', 'stripe', 'standard'));
)sql";

// Active query (SPEC §10): one row per payment the engine may ask its gateway about, with the
// attempt count and the next time, so a restart or a second engine neither loses nor doubles a
// schedule. Made with the payment; a payment that is no longer pending is finished when next due.
// `next_at = 'infinity'` once the schedule is done. Existing pending payments are due at once.
constexpr std::string_view kV5PaymentQuery = R"sql(
CREATE TABLE payment_query (
  payment_no    TEXT PRIMARY KEY REFERENCES payment_order (payment_no),
  attempts      INT NOT NULL DEFAULT 0,
  next_at       TIMESTAMPTZ NOT NULL,
  last_result   TEXT,
  last_at       TIMESTAMPTZ,
  sweep_delayed BOOLEAN NOT NULL DEFAULT false
);
-- The scheduler takes due rows in next_at order.
CREATE INDEX payment_query_next_idx ON payment_query (next_at);
INSERT INTO payment_query (payment_no, next_at)
SELECT payment_no, now() FROM payment_order WHERE status = 0;
)sql";

// The callback log keeps each verified callback's raw request (SPEC §12): the body bytes and the
// lower-cased headers its channel reads, with the result class and HTTP status of its first
// delivery, so the console can show it and an operator can replay it. Retention deletes the row,
// raw request included. Rows from before this migration have none (NULL). The payment timeline
// finds a payment's events by their derived ids (the event_id key), so the hot path pays for no
// new index.
constexpr std::string_view kV6CallbackRawRequest = R"sql(
ALTER TABLE payment_callback_log
  ADD COLUMN result      TEXT,
  ADD COLUMN http_status SMALLINT,
  ADD COLUMN raw_body    BYTEA,
  ADD COLUMN raw_headers JSONB;
)sql";

// An arbitrary constant that names SeatFlow's migration lock.
constexpr long long kMigrationLockKey = 0x5EA7F10;

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> all = {
      {1, "payments, orders, callback log, discrepancies", kV1Schema, {}},
      {2, "payment event outbox", kV2PaymentEvents, {}},
      {3, "seat claims", kV3SeatClaims, kV3Report},
      {4, "stripe and standard channels", kV4StripeStandardChannels, {}},
      {5, "payment query schedule", kV5PaymentQuery, {}},
      {6, "callback log raw request", kV6CallbackRawRequest, {}},
  };
  return all;
}

MigrationReport apply_migrations(pqxx::connection& conn, int up_to_version) {
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
    if (migration.version > up_to_version) {
      continue;
    }
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
    if (!migration.report_sql.empty()) {
      report.notes.push_back("version " + std::to_string(migration.version) + ": " +
                             tx.exec1(std::string(migration.report_sql))[0].as<std::string>());
    }
    tx.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                   migration.version, std::string(migration.name));
    tx.commit();
    report.applied.push_back(migration.version);
    report.to_version = std::max(report.to_version, migration.version);
  }
  return report;
}

}  // namespace seatflow::persistence

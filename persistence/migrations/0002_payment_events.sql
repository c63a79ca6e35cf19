-- payment event outbox
-- The transactional outbox: one row per state move, written in the move's own transaction and
-- relayed to a Redis Stream (docs/ARCHITECTURE.md, "Payment events"). event_id is derived from the
-- move itself (each move happens at most once per payment), so a replay can never add a second row.
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

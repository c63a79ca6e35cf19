-- payment query schedule
-- Active query (SPEC §10): one row per payment the engine may ask its gateway about, with the
-- attempt count and the next time, so a restart or a second engine neither loses nor doubles a
-- schedule. Made with the payment; a payment that is no longer pending is finished when next due.
-- `next_at = 'infinity'` once the schedule is done. Existing pending payments are due at once.
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
SELECT payment_no, now() FROM payment_order WHERE status = {{payment.pending}};

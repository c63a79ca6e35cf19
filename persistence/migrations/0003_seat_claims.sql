-- seat claims
-- Seat claims (SPEC §9): PostgreSQL decides who holds a seat, Redis is the fast path. The backfill
-- gives each seat listed by a live (PENDING or PAID) order to one of them: a PAID order before a
-- PENDING one (money was taken for it, and its seat is the one Redis has sold), then the older by
-- created_at. Every other live order that lists the seat keeps its row but gets no claim; one with
-- a payment gets one seat_conflict discrepancy (and its discrepancy.recorded event) naming its
-- seats and their holders. One with no payment yet has taken no money, so it has no discrepancy
-- (whose payment_no is required): the report counts it, `seatflow check` lists it, and the orders
-- API refuses it a payment. Everything is set-based in the migration's one transaction, so it
-- cannot stop half-way, and the report query says what it found.
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
                          ORDER BY (o.status = {{order.paid}}) DESC, o.created_at, o.order_no) AS rank
FROM order_info o CROSS JOIN LATERAL unnest(o.seat_ids) AS s (seat_id)
WHERE o.status IN ({{order.pending}}, {{order.paid}});

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
-- Each recorded conflict emits its event into the WAL as every move does (migration 8 moved the
-- events out of the payment_event table; `seatflow migrate` creates the event slot first).
SELECT count(pg_logical_emit_message(true, 'seatflow', json_build_object(
         'event_id', 'discrepancy.recorded:' || r.id, 'type', 'discrepancy.recorded',
         'payment_no', r.payment_no, 'order_no', r.order_no,
         'amount_cents', (SELECT p.amount_cents FROM payment_order p
                          WHERE p.payment_no = r.payment_no),
         'detail', r.kind,
         'occurred_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))::text))
FROM recorded r;

-- refunds (SPEC §2, §4, §17), the discrepancy refunds moved in
-- One row per refund: money given back for part or all of a payment. `refund_no` is the gateway's
-- idempotency key, kept before any call; `seat_ids` empty means money only; `status` is SPEC §4's
-- refund machine (domain::next_refund_status), moved by conditional UPDATEs only.
--
-- A discrepancy's refund (SPEC §12, source `discrepancy`) is one row per discrepancy
-- (`discrepancy_id`, UNIQUE) that is retried under its number until it succeeds:
--   `attempts`            the gateway calls made so far;
--   `attempt_started_at`  when the last one started: while it is out (`attempt_finished_at` NULL)
--                         it holds the row for the refunder's lease, after which a crashed
--                         attempt is taken again;
--   `attempt_finished_at` when the last one ended;
--   `gateway_note`        the gateway's words on a success.
-- A failed attempt (refused, unreachable, an answer not proven) leaves the refund PENDING with its
-- `failure_reason` and `attempt_finished_at`: the gateways take a retry under the same number as
-- the same refund, and FAILED is final in SPEC §4, so it is not written for a refund that is
-- still retried. The API shows such a row as "failed", as it always did.
CREATE TABLE refund (
  refund_no           TEXT PRIMARY KEY CHECK (refund_no ~ '^[A-Za-z0-9_-]{1,64}$'),
  payment_no          TEXT NOT NULL REFERENCES payment_order (payment_no),
  order_no            TEXT NOT NULL,
  channel             TEXT NOT NULL,
  seat_ids            TEXT[] NOT NULL DEFAULT '{}',
  amount_cents        BIGINT NOT NULL CHECK (amount_cents > 0),
  reason              TEXT,
  source              TEXT NOT NULL CHECK (source IN ('api', 'discrepancy', 'gateway', 'offline')),
  status              SMALLINT NOT NULL DEFAULT {{refund_status.pending}}
                        CHECK (status BETWEEN {{refund_status.pending}} AND {{refund_status.abnormal}}),
  gateway_refund_id   TEXT,
  failure_reason      TEXT,
  requested_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  accepted_at         TIMESTAMPTZ,
  settled_at          TIMESTAMPTZ,
  updated_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
  discrepancy_id      BIGINT UNIQUE REFERENCES payment_discrepancy (id) ON DELETE CASCADE,
  attempts            INT NOT NULL DEFAULT 1 CHECK (attempts >= 0),
  attempt_started_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  attempt_finished_at TIMESTAMPTZ,
  gateway_note        TEXT,
  CHECK ((source = 'discrepancy') = (discrepancy_id IS NOT NULL))
);
-- A payment's refunds: the sum under its row lock, its refunds page, the timeline.
CREATE INDEX refund_payment_idx ON refund (payment_no);
-- The refunds still followed (re-sent or asked about), oldest first, and the age of the oldest.
CREATE INDEX refund_open_idx ON refund (status, requested_at)
  WHERE status IN ({{refund_status.pending}}, {{refund_status.processing}});

-- discrepancy_refund's rows, their numbers kept: succeeded → SUCCEEDED (settled when it finished);
-- pending and failed → PENDING (failed: the attempt ended, with its reason). The counts must
-- agree: a row without its discrepancy's payment stops the migration rather than being lost.
INSERT INTO refund (refund_no, payment_no, order_no, channel, amount_cents, reason, source, status,
                    gateway_refund_id, failure_reason, requested_at, accepted_at, settled_at,
                    updated_at, discrepancy_id, attempts, attempt_started_at, attempt_finished_at,
                    gateway_note)
SELECT r.refund_no, d.payment_no, p.order_no, r.channel, r.amount_cents, d.kind, 'discrepancy',
       CASE WHEN r.status = {{refund.succeeded}} THEN {{refund_status.succeeded}}
            ELSE {{refund_status.pending}} END,
       r.gateway_refund_no,
       CASE WHEN r.status = {{refund.failed}} THEN r.reason END,
       r.created_at,
       CASE WHEN r.status = {{refund.succeeded}} THEN r.finished_at END,
       CASE WHEN r.status = {{refund.succeeded}} THEN r.finished_at END,
       r.updated_at, r.discrepancy_id, r.attempts, r.started_at,
       CASE WHEN r.status = {{refund.pending}} THEN NULL ELSE r.finished_at END,
       CASE WHEN r.status = {{refund.succeeded}} THEN r.reason END
FROM discrepancy_refund r
JOIN payment_discrepancy d ON d.id = r.discrepancy_id
JOIN payment_order p ON p.payment_no = d.payment_no;

DO $$
BEGIN
  IF (SELECT count(*) FROM discrepancy_refund) <> (SELECT count(*) FROM refund) THEN
    RAISE EXCEPTION 'discrepancy_refund rows without their payment: not moved into refund';
  END IF;
END $$;

-- Nothing reads it any more (persistence/stores/refund_store.cpp writes refund); a view of the
-- old name would be a second way to write a refund, and the table a second truth.
DROP TABLE discrepancy_refund;

-- Order status 4 PARTIALLY_REFUNDED (SPEC §2).
ALTER TABLE order_info DROP CONSTRAINT order_info_status_check;
ALTER TABLE order_info ADD CONSTRAINT order_info_status_check
  CHECK (status BETWEEN {{order.pending}} AND {{order.partially_refunded}});

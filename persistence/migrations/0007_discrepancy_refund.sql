-- discrepancy refunds
-- Gateway refunds of discrepancies (SPEC §12): at most one refund per discrepancy (the primary
-- key), written before the gateway is asked, under a refund number that every retry reuses (and
-- that is unique, as the gateways require per merchant). `pending` while a gateway call is out
-- (its `started_at` is the lease: a row left pending by a crash is taken again after it);
-- `succeeded` resolves the discrepancy in the same transaction; `failed` keeps the gateway's
-- reason, and a retry is allowed.
CREATE TABLE discrepancy_refund (
  discrepancy_id    BIGINT PRIMARY KEY REFERENCES payment_discrepancy (id) ON DELETE CASCADE,
  refund_no         TEXT NOT NULL UNIQUE,
  channel           TEXT NOT NULL,
  amount_cents      BIGINT NOT NULL CHECK (amount_cents > 0),
  status            TEXT NOT NULL CHECK (status IN ({{refund.pending}}, {{refund.succeeded}}, {{refund.failed}})),
  reason            TEXT,
  gateway_refund_no TEXT,
  attempts          INT NOT NULL DEFAULT 1,
  created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  started_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  finished_at       TIMESTAMPTZ,
  updated_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);

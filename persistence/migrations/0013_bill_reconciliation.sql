-- bill reconciliation runs and items
-- SPEC §13: one row per run of one channel and bill date, with its counts by outcome, the fees and
-- the bill's SHA-256; one item per bill row (matched ones too: the neighbouring days' runs read
-- them) and per payment or refund missing at the gateway. A run is `running` while an engine or
-- the CLI holds it; `lease_until` bounds that hold, so a running row left by a crashed process is
-- taken over (failed, reason "abandoned") by the next run of that channel and date.
CREATE TABLE bill_run (
  id            BIGSERIAL PRIMARY KEY,
  channel       TEXT NOT NULL,
  bill_date     DATE NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ({{bill_run.running}}, {{bill_run.done}}, {{bill_run.failed}}, {{bill_run.not_ready}})),
  reason        TEXT,
  rows          BIGINT NOT NULL DEFAULT 0,
  matched       BIGINT NOT NULL DEFAULT 0,
  repaired      BIGINT NOT NULL DEFAULT 0,
  discrepancies BIGINT NOT NULL DEFAULT 0,
  counts        JSONB NOT NULL DEFAULT '{}'::jsonb,
  fees_cents    BIGINT NOT NULL DEFAULT 0,
  bill_sha256   TEXT,
  started_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  finished_at   TIMESTAMPTZ,
  lease_until   TIMESTAMPTZ NOT NULL
);
-- Two runs of one channel and date never run at once, whichever engine or tool starts them.
CREATE UNIQUE INDEX bill_run_running_idx ON bill_run (channel, bill_date) WHERE state = {{bill_run.running}};
-- The latest runs of a channel and day (neighbouring days, the schedule, the list).
CREATE INDEX bill_run_day_idx ON bill_run (channel, bill_date, id);

CREATE TABLE bill_item (
  run_id               BIGINT NOT NULL REFERENCES bill_run (id) ON DELETE CASCADE,
  seq                  BIGINT NOT NULL,
  outcome              TEXT NOT NULL,
  kind                 TEXT NOT NULL CHECK (kind IN ('payment', 'refund')),
  payment_no           TEXT NOT NULL,
  trade_no             TEXT NOT NULL,
  refund_no            TEXT NOT NULL DEFAULT '',
  gateway_amount_cents BIGINT,
  local_amount_cents   BIGINT,
  fee_cents            BIGINT NOT NULL DEFAULT 0,
  completed_at         TIMESTAMPTZ,
  detail               JSONB NOT NULL DEFAULT '{}'::jsonb,
  discrepancy_id       BIGINT,
  PRIMARY KEY (run_id, seq)
);

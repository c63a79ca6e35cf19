-- payments, orders, callback log, discrepancies
CREATE TABLE order_info (
  order_no     TEXT PRIMARY KEY,
  user_id      TEXT,
  show_id      TEXT NOT NULL,
  seat_ids     TEXT[] NOT NULL,
  amount_cents BIGINT NOT NULL CHECK (amount_cents >= 0),
  status       SMALLINT NOT NULL DEFAULT {{order.pending}} CHECK (status BETWEEN {{order.pending}} AND {{order.refunded}}),
  expires_at   TIMESTAMPTZ,
  paid_at      TIMESTAMPTZ,
  created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- The timeout sweeper scans pending orders by expiry.
CREATE INDEX order_info_pending_expiry_idx ON order_info (expires_at) WHERE status = {{order.pending}};

CREATE TABLE payment_order (
  payment_no       TEXT PRIMARY KEY,
  order_no         TEXT NOT NULL UNIQUE REFERENCES order_info (order_no),
  channel          TEXT NOT NULL CHECK (channel IN ('hmac', 'alipay', 'wechat')),
  amount_cents     BIGINT NOT NULL CHECK (amount_cents >= 0),
  status           SMALLINT NOT NULL DEFAULT {{payment.pending}} CHECK (status BETWEEN {{payment.pending}} AND {{payment.refunded}}),
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

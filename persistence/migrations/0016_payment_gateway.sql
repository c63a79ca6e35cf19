-- the payment at its gateway (SPEC §16)
-- One row per payment SeatFlow created or tried to close at its gateway. `pay` is the answer's
-- "pay" object once the gateway confirmed the creation ({"kind": "qr", "codeUrl": …}); `gateway_ref`
-- the gateway's own id when a later call needs it (Stripe's PaymentIntent). The sweeper keeps its
-- unconfirmed closes here: `close_attempts` made so far and `close_next_at`, before which it does
-- not list the payment's order again. Apart from payment_order, so its hot row stays narrow.
CREATE TABLE payment_gateway (
  payment_no TEXT PRIMARY KEY REFERENCES payment_order (payment_no) ON DELETE CASCADE,
  pay JSONB,
  gateway_ref TEXT,
  close_attempts INT NOT NULL DEFAULT 0,
  close_next_at TIMESTAMPTZ,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- SEATFLOW_AUTO_REFUND=paid_after_cancel looks for the open paid_after_cancel discrepancies every
-- few seconds: a lookup of those alone, however many other discrepancies a bill run left open.
CREATE INDEX payment_discrepancy_paid_after_cancel_idx ON payment_discrepancy (id)
  WHERE kind = 'paid_after_cancel' AND resolved_at IS NULL;

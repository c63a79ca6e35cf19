-- stripe and standard channels
-- SPEC §11: payments may be made through the stripe and standard dialects too. Migration 1 named
-- its CHECK constraint implicitly; PostgreSQL calls it payment_order_channel_check.
ALTER TABLE payment_order DROP CONSTRAINT payment_order_channel_check;
ALTER TABLE payment_order ADD CONSTRAINT payment_order_channel_check
  CHECK (channel IN ('hmac', 'alipay', 'wechat', 'stripe', 'standard'));

-- The bill bench's books: :n orders with their payments (ids O<run>-<i>, P<run>-<i>), loaded in one
-- statement each the way users bulk-load, with autovacuum off on the tables so no ANALYZE runs
-- (the matching must not depend on fresh statistics). Payments :repairs and up are SUCCESS, paid on
-- :'day' with trade T<run>-<i>; the first :repairs are PENDING with their seats locked (bench/bill.sh
-- locks them in Redis), so the bill repairs them through the pipeline. Two seats per order, 1000
-- orders per show, every live order's seats claimed (SPEC §9).
-- Run with: psql -v ON_ERROR_STOP=1 -v run=PREFIX -v n=COUNT -v repairs=R -v day=YYYY-MM-DD -f bench/bill_seed.sql
ALTER TABLE order_info SET (autovacuum_enabled = false);
ALTER TABLE payment_order SET (autovacuum_enabled = false);
ALTER TABLE seat_claim SET (autovacuum_enabled = false);
INSERT INTO order_info (order_no, user_id, show_id, seat_ids, amount_cents, status, expires_at, paid_at)
SELECT 'O' || :'run' || '-' || g, 'u' || (g % 5000), 'S' || :'run' || '-' || (g / 1000),
       ARRAY['R' || (g % 1000) || 'S0', 'R' || (g % 1000) || 'S1'], 5000,
       CASE WHEN g < :repairs THEN 0 ELSE 1 END,
       now() + interval '1 day',
       CASE WHEN g < :repairs THEN NULL ELSE (:'day' || 'T02:00:00Z')::timestamptz END
FROM generate_series(0, :n - 1) AS g;
INSERT INTO payment_order (payment_no, order_no, channel, amount_cents, status, channel_trade_no, paid_at)
SELECT 'P' || :'run' || '-' || g, 'O' || :'run' || '-' || g, 'hmac', 5000,
       CASE WHEN g < :repairs THEN 0 ELSE 1 END,
       CASE WHEN g < :repairs THEN NULL ELSE 'T' || :'run' || '-' || g END,
       CASE WHEN g < :repairs THEN NULL ELSE (:'day' || 'T02:00:00Z')::timestamptz END
FROM generate_series(0, :n - 1) AS g;
INSERT INTO seat_claim (show_id, seat_id, order_no)
SELECT 'S' || :'run' || '-' || (g / 1000), 'R' || (g % 1000) || 'S' || s, 'O' || :'run' || '-' || g
FROM generate_series(0, :n - 1) AS g, generate_series(0, 1) AS s;

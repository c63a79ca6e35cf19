-- Seeds :n pending orders and hmac payments for one pgbench run (ids P<run>-<i>, O<run>-<i>, i < n).
-- Same shape as seatflow-bench's seed: two seats per order, 1000 orders per show, then VACUUM ANALYZE.
-- Run with: psql -v ON_ERROR_STOP=1 -v run=PREFIX -v n=COUNT -f bench/pgbench_seed.sql
INSERT INTO order_info (order_no, user_id, show_id, seat_ids, amount_cents)
SELECT 'O' || :'run' || '-' || g, 'u' || (g % 5000), 'S' || :'run' || '-' || (g / 1000),
       ARRAY['R' || (g % 1000) || 'S0', 'R' || (g % 1000) || 'S1'], 5000
FROM generate_series(0, :n - 1) AS g;
INSERT INTO payment_order (payment_no, order_no, channel, amount_cents)
SELECT 'P' || :'run' || '-' || g, 'O' || :'run' || '-' || g, 'hmac', 5000
FROM generate_series(0, :n - 1) AS g;
VACUUM (ANALYZE) order_info, payment_order, payment_callback_log;

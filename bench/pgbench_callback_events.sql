-- pgbench script: SPEC §6's work for one success callback done the seed's way, one transaction per
-- callback: the log insert, the payment CAS, the order CAS and the two events of the moves
-- (payment.succeeded, order.paid) emitted as the engine emits them (transactional logical
-- messages, persistence/events.cpp), then commit. No Redis step, no row lock, no batching.
-- Seeded like bench/pgbench_callback.sql. (No ":" inside the SQL text: pgbench -M prepared takes
-- every :word, quoted or not, for a variable.)
-- Run with: pgbench -n -M prepared -c 8 -j 2 -t PER_CLIENT -D k=0 -D per_client=PER_CLIENT -D run=PREFIX
\set k :k + 1
\set n :client_id * :per_client + :k - 1
BEGIN;
INSERT INTO payment_callback_log
  (callback_id, channel, payment_no, status, payload_sha256, received_at)
VALUES ('C' || :run || '-' || :n || '-0', 'hmac', 'P' || :run || '-' || :n, 1,
        '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', now());
WITH moved AS (
  UPDATE payment_order SET status = 1, paid_at = now(), updated_at = now()
  WHERE payment_no = 'P' || :run || '-' || :n AND status = 0
  RETURNING payment_no, order_no, amount_cents)
SELECT pg_logical_emit_message(true, 'seatflow', json_build_object(
  'event_id', 'payment.succeeded:' || payment_no, 'type', 'payment.succeeded',
  'payment_no', payment_no, 'order_no', order_no, 'amount_cents', amount_cents,
  'occurred_at', (now() AT TIME ZONE 'UTC')::text)::text)
FROM moved;
WITH moved AS (
  UPDATE order_info SET status = 1, updated_at = now()
  WHERE order_no = 'O' || :run || '-' || :n AND status = 0
  RETURNING order_no, amount_cents)
SELECT pg_logical_emit_message(true, 'seatflow', json_build_object(
  'event_id', 'order.paid:' || order_no, 'type', 'order.paid',
  'payment_no', (SELECT p.payment_no FROM payment_order p WHERE p.order_no = moved.order_no),
  'order_no', order_no, 'amount_cents', amount_cents,
  'occurred_at', (now() AT TIME ZONE 'UTC')::text)::text)
FROM moved;
COMMIT;

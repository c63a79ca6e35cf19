-- pgbench script: the seed design's per-callback transaction (log insert, payment CAS, order CAS, commit).
-- No Redis step and no row lock: this is the PostgreSQL floor a callback engine has to beat.
-- Each transaction takes a fresh payment seeded by bench/pgbench_seed.sql:
--   n = client_id * per_client + (this client's transaction number), so every CAS really moves a row.
-- Run with: pgbench -n -M prepared -c 8 -j 2 -t PER_CLIENT -D k=0 -D per_client=PER_CLIENT -D run=PREFIX
\set k :k + 1
\set n :client_id * :per_client + :k - 1
BEGIN;
INSERT INTO payment_callback_log
  (callback_id, channel, payment_no, status, payload_sha256, received_at)
VALUES ('C' || :run || '-' || :n || '-0', 'hmac', 'P' || :run || '-' || :n, 1,
        '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', now());
UPDATE payment_order SET status = 1, paid_at = now(), updated_at = now()
WHERE payment_no = 'P' || :run || '-' || :n AND status = 0;
UPDATE order_info SET status = 1, updated_at = now()
WHERE order_no = 'O' || :run || '-' || :n AND status = 0;
COMMIT;

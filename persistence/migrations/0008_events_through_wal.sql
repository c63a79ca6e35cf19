-- payment events through the WAL
-- Events leave the payment_event table: every move emits its event as a transactional WAL message
-- (pg_logical_emit_message, prefix 'seatflow'), and the relay reads them from the logical
-- replication slot seatflow_events (pgoutput) through this publication, which covers no table,
-- so only the messages and their transactions' begin and commit are decoded. The slot itself is
-- created by `seatflow migrate` and the engine's start when missing (it cannot be part of a
-- transaction). Events still unpublished in the old table would be lost with it, so the
-- migration refuses while there are any: run the previous engine until its relay has sent them.
DO $$
DECLARE
  waiting BIGINT;
BEGIN
  SELECT count(*) INTO waiting FROM payment_event WHERE published_at IS NULL;
  IF waiting > 0 THEN
    RAISE EXCEPTION 'migration 8 refused: payment_event holds % unpublished events; run the previous SeatFlow version until its relay has published them (SELECT count(*) FROM payment_event WHERE published_at IS NULL returns 0), then migrate again', waiting;
  END IF;
END
$$;
DROP TABLE payment_event;
CREATE PUBLICATION seatflow_events;

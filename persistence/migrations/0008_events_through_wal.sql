-- payment events through the WAL
-- Events leave the payment_event table: every move emits its event as a transactional WAL message
-- (pg_logical_emit_message, prefix 'seatflow'), and the relay reads them from the logical
-- replication slot seatflow_events (pgoutput) through this publication, which covers no table,
-- so only the messages and their transactions' begin and commit are decoded. `seatflow migrate`
-- and the engine's start create the publication and then the slot before any migration when they
-- are missing (a slot cannot be made in a transaction that wrote, and pgoutput must find the
-- publication as of every change it decodes); this creates the publication for other callers. Events still unpublished in the old table would be lost with it, so the
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
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = 'seatflow_events') THEN
    CREATE PUBLICATION seatflow_events;
  END IF;
END
$$;

-- no move into a slot that is still being made
-- While pg_create_logical_replication_slot runs, the slot is already listed (wal_status
-- 'reserved') but its confirmed_flush_lsn is NULL: the server is waiting for the transactions
-- running at that moment to end, and none of them will ever be decoded by the slot. A move whose
-- statement passed migration 11's guard in that window (after a failover, `seatflow migrate` or an
-- engine start makes the slot while other engines serve) committed with an event no one would
-- read. The guard now also refuses a slot without a confirmed position (SQLSTATE SF001, 503: the
-- gateway sends again); once the slot is made, every transaction that emits after that commits
-- after the slot's start and is decoded.
CREATE OR REPLACE FUNCTION seatflow_emit_events(payload TEXT) RETURNS pg_lsn
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  bound TEXT;
  status TEXT;
  confirmed pg_lsn;
BEGIN
  SELECT e.slot_name INTO bound FROM event_slot e;
  IF bound IS NULL THEN
    RAISE EXCEPTION 'seatflow: no event slot is recorded for this database: run seatflow migrate'
      USING ERRCODE = 'SF001';
  END IF;
  SELECT coalesce(r.wal_status, 'lost'), r.confirmed_flush_lsn INTO status, confirmed
  FROM pg_get_replication_slots() r
  WHERE r.slot_name = bound;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'seatflow: the event slot % is missing: its events would be lost; seatflow migrate makes it', bound
      USING ERRCODE = 'SF001';
  END IF;
  IF status = 'lost' THEN
    RAISE EXCEPTION 'seatflow: the event slot % was invalidated (wal_status=lost): docs/RELIABILITY.md', bound
      USING ERRCODE = 'SF001';
  END IF;
  IF confirmed IS NULL THEN
    RAISE EXCEPTION 'seatflow: the event slot % is still being created: this transaction would not be decoded', bound
      USING ERRCODE = 'SF001';
  END IF;
  RETURN pg_logical_emit_message(true, 'seatflow', payload);
END
$$;

-- no move without its event: events are emitted only into a slot that exists
-- A move's event is a WAL message, and only a logical slot that existed when it was written can
-- ever decode it. After a failover (PostgreSQL 15 gives the promoted server no slot), after a slot
-- was dropped, or once max_slot_wal_keep_size has invalidated it, a move would commit with an
-- event that no one will read. Every statement that emits events now goes through
-- seatflow_emit_events, which raises SQLSTATE SF001 when the slot of this database's events is
-- missing or invalidated: the statement, and with it the move, does not happen, and the engine
-- answers 503 (the gateway sends again) until `seatflow migrate` or an engine start has made the
-- slot. event_slot names that slot: `seatflow migrate` and every engine start record the slot they
-- use (SEATFLOW_EVENT_SLOT); here, the logical slot of this database that the migrate run just
-- made or found (the first by name when there are several, which those two correct).
CREATE TABLE event_slot (
  only_row  BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
  slot_name TEXT NOT NULL
);
INSERT INTO event_slot (slot_name)
SELECT slot_name FROM pg_replication_slots
WHERE database = current_database() AND slot_type = 'logical' AND plugin = 'pgoutput'
  AND NOT temporary
ORDER BY slot_name LIMIT 1;

-- The slot functions' rows, not the pg_replication_slots view with its join to pg_database: about
-- 10 µs per call against 16 (psql, 20 000 calls; pg_logical_emit_message alone 1 µs), once per
-- emitting statement, i.e. per batch of callbacks. Slot names are unique in the server; a slot of
-- that name on another database is refused by `seatflow migrate` and the engine's start.
CREATE FUNCTION seatflow_emit_events(payload TEXT) RETURNS pg_lsn
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  bound TEXT;
  status TEXT;
BEGIN
  SELECT e.slot_name INTO bound FROM event_slot e;
  IF bound IS NULL THEN
    RAISE EXCEPTION 'seatflow: no event slot is recorded for this database: run seatflow migrate'
      USING ERRCODE = 'SF001';
  END IF;
  SELECT coalesce(r.wal_status, 'lost') INTO status FROM pg_get_replication_slots() r
  WHERE r.slot_name = bound;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'seatflow: the event slot % is missing: its events would be lost; seatflow migrate makes it', bound
      USING ERRCODE = 'SF001';
  END IF;
  IF status = 'lost' THEN
    RAISE EXCEPTION 'seatflow: the event slot % was invalidated (wal_status=lost): docs/RELIABILITY.md', bound
      USING ERRCODE = 'SF001';
  END IF;
  RETURN pg_logical_emit_message(true, 'seatflow', payload);
END
$$;

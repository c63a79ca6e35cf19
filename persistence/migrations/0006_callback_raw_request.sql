-- callback log raw request
-- The callback log keeps each verified callback's raw request (SPEC §12): the body bytes and the
-- lower-cased headers its channel reads, with the result class and HTTP status of its first
-- delivery, so the console can show it and an operator can replay it. Retention deletes the row,
-- raw request included. Rows from before this migration have none (NULL). The payment timeline
-- finds a payment's events by their derived ids (the event_id key), so the hot path pays for no
-- new index.
ALTER TABLE payment_callback_log
  ADD COLUMN result      TEXT,
  ADD COLUMN http_status SMALLINT,
  ADD COLUMN raw_body    BYTEA,
  ADD COLUMN raw_headers JSONB;

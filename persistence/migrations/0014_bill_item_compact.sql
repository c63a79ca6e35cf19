-- bill items written in paced chunks
-- A matched item carries no detail of its own: the reads build it from the item's columns and its
-- run (local_status and local_trade_no keep what the matching saw), so a million-row bill writes
-- narrow rows. Every other outcome keeps its detail, as payment_discrepancy copies it. The items
-- still to look at (everything but matched: repairs, discrepancies) have their own small index, so
-- the repairs, the discrepancies and the API's outcome filter never scan a run's matched rows.
ALTER TABLE bill_item ADD COLUMN local_status SMALLINT, ADD COLUMN local_trade_no TEXT;
CREATE INDEX bill_item_open_idx ON bill_item (run_id, seq) WHERE outcome <> 'matched';

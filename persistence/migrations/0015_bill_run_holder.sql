-- bill runs name their holder; discrepancies found by payment
-- A running run names the engine or tool that holds it (`holder`: the host and the engine's HTTP
-- address, stable across a restart of that engine; the CLI's host and process). An engine that
-- starts fails the running runs it held before a crash at once; every other holder's lease is
-- short and renewed while its run is alive (actors/bill_lease.hpp), so a run left by a crash is
-- taken over within that lease.
ALTER TABLE bill_run ADD COLUMN holder TEXT;
-- Every discrepancy of a payment and kind, open or resolved: a bill run links its items to their
-- discrepancies and looks for the ones an earlier run opened, a lookup per key (the open-only
-- unique index of migration 1 serves neither a resolved row nor a search without its predicate).
CREATE INDEX payment_discrepancy_payment_idx ON payment_discrepancy (payment_no, kind, id);

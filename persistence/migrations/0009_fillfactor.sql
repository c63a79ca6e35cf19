-- Room on each page for the next version of its rows
-- A payment moves once or twice in its life (pending -> paid, later perhaps refunded), and a log
-- row's duplicate_count grows with every copy. With full pages (a bulk load with COPY fills them)
-- each such update must put the new version on another page and add an entry to every index of
-- the table; with free space on the page and no indexed column changed it is a HOT update, one
-- heap write and no index entry. Applies to pages written from now on; VACUUM FULL or CLUSTER
-- rewrites older ones. (order_info's updates cannot be HOT: its status is in the predicate of
-- order_info_pending_expiry_idx.)
ALTER TABLE payment_order SET (fillfactor = 85);
ALTER TABLE payment_callback_log SET (fillfactor = 90);

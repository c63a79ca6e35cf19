-- Room on each order page for the order's moved version
-- An order moves once or twice in its life (pending -> paid, later perhaps refunded). Its status
-- is in the predicate of order_info_pending_expiry_idx, so the move is never a HOT update, but
-- with free space on the page the new version stays on the old one: no free-space-map search, no
-- second page dirtied and written to the WAL, and the page's dead version is pruned in place.
-- A bulk load with COPY fills pages to the brim; from now on it leaves this room. Applies to pages
-- written from now on; VACUUM FULL or CLUSTER rewrites older ones.
ALTER TABLE order_info SET (fillfactor = 85);

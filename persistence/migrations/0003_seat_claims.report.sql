-- What migration 3 found, read in its transaction before the temporary table goes.
SELECT format('seat claims: %s seats of %s live orders claimed; %s seats listed by more than one '
              'live order; %s orders left without a claim on them: %s with a payment, recorded '
              'as seat_conflict, %s without one',
              (SELECT count(*) FROM seat_claim_backfill WHERE rank = 1),
              (SELECT count(DISTINCT order_no) FROM seat_claim_backfill WHERE rank = 1),
              (SELECT count(*) FROM (SELECT DISTINCT show_id, seat_id FROM seat_claim_backfill
                                     WHERE rank > 1) s),
              (SELECT count(DISTINCT order_no) FROM seat_claim_backfill WHERE rank > 1),
              (SELECT count(DISTINCT b.order_no) FROM seat_claim_backfill b
               JOIN payment_order p ON p.order_no = b.order_no WHERE b.rank > 1),
              (SELECT count(DISTINCT b.order_no) FROM seat_claim_backfill b
               WHERE b.rank > 1 AND NOT EXISTS (SELECT 1 FROM payment_order p
                                                WHERE p.order_no = b.order_no)))

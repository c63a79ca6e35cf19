// A bill run's load: the session's TEMP staging table and its COPY, then the matching in paced
// chunks (each a page range of the staged rows, matched by primary key and written as items), the
// day's missing payments and refunds, and the discrepancies in paced chunks of items (each a seq
// range of the run). SQL as named constants; a bill row is never held in a C++ container.
#include <algorithm>
#include <chrono>

#include <pqxx/stream_to>

#include "persistence/drivers/log.hpp"
#include "persistence/stores/bill_keys.hpp"
#include "persistence/stores/bill_store.hpp"
#include "persistence/stores/events.hpp"
#include "persistence/stores/status_sql.hpp"

namespace seatflow::persistence {
namespace {

// The run's work tables live in the session (temporary: never WAL-logged, never decoded by the
// event slot), from the load's COPY to the last chunk; dropped at the start and the end of a run.
constexpr const char* kDropWork =
    "DROP TABLE IF EXISTS pg_temp.bill_stage, pg_temp.bill_dup, pg_temp.bill_taken";
constexpr const char* kCreateStage =
    "CREATE TEMP TABLE bill_stage (seq BIGINT NOT NULL, kind TEXT NOT NULL, trade_no TEXT NOT "
    "NULL, payment_no TEXT NOT NULL, refund_no TEXT NOT NULL, amount_cents BIGINT NOT NULL, "
    "fee_cents BIGINT NOT NULL, completed_at_ms BIGINT NOT NULL)";
// The matching hashes a whole bill: room in the server's memory, not ours.
constexpr const char* kWorkMem = "SET LOCAL work_mem = '128MB'";
constexpr const char* kAnalyzeStage = "ANALYZE bill_stage";
// A row that names only its trade (a Stripe refund) gets its payment through the unique
// (channel, channel_trade_no) index.
constexpr const char* kResolveTrades =
    "UPDATE bill_stage s SET payment_no = p.payment_no FROM payment_order p "
    "WHERE s.payment_no = '' AND p.channel = $1 AND p.channel_trade_no = s.trade_no";

// Money taken (SUCCESS, or REFUNDED: taken, then given back) and given back, as status conditions
// built from the domain's statuses (persistence/stores/status_sql.hpp).
std::string bill_paid_in(std::string_view column) {
  return status_sql::in(
      column, std::vector{domain::PaymentStatus::success, domain::PaymentStatus::refunded});
}
std::string bill_refunded_in(std::string_view column) {
  return status_sql::in(column, std::vector{domain::PaymentStatus::refunded});
}

// The gateway payments that share one payment, ranked: the first (the one with the local trade,
// else the first listed) is matched, the others are duplicate_trade. Only the rows of repeated
// keys are ranked, so a bill without duplicates sorts nothing.
constexpr const char* kRankDuplicates =
    "CREATE TEMP TABLE bill_dup AS "
    "SELECT st.seq, row_number() OVER (PARTITION BY st.kind, st.payment_no "
    "  ORDER BY st.trade_no = COALESCE(p.channel_trade_no, '') DESC, st.seq) AS dup "
    "FROM bill_stage st "
    "JOIN (SELECT kind, payment_no FROM bill_stage GROUP BY kind, payment_no "
    "      HAVING count(*) > 1) k ON k.kind = st.kind AND k.payment_no = st.payment_no "
    "LEFT JOIN LATERAL (SELECT o.channel_trade_no FROM payment_order o "
    "  WHERE o.payment_no = st.payment_no AND o.channel = $1 LIMIT 1) p ON true";
constexpr const char* kIndexDuplicates = "CREATE INDEX ON bill_dup (seq)";
// No key repeats (persistence/stores/bill_keys.hpp): nothing to rank.
constexpr const char* kNoDuplicates = "CREATE TEMP TABLE bill_dup (seq BIGINT, dup BIGINT)";
// Money already recorded as taken for nothing (a paid_after_cancel/paid_after_refund
// discrepancy, open or resolved), and whether a discrepancy refund gave it back.
const std::string kTakenForNothing =
    "CREATE TEMP TABLE bill_taken AS "
    "SELECT d.payment_no, bool_or(r.status = " +
    status_sql::literal(domain::RefundStatus::succeeded) +
    ") AS refunded "
    "FROM payment_discrepancy d LEFT JOIN refund r ON r.discrepancy_id = d.id "
    "WHERE d.kind IN ('paid_after_cancel', 'paid_after_refund') GROUP BY d.payment_no";
constexpr const char* kIndexTaken = "CREATE INDEX ON bill_taken (payment_no)";
constexpr const char* kAnalyzeWork = "ANALYZE bill_dup, bill_taken";
// The staging table's pages, the chunks' unit.
constexpr const char* kStageBlocks =
    "SELECT pg_relation_size('pg_temp.bill_stage') / current_setting('block_size')::bigint";

// One chunk: the staged rows of pages [$3, $4) (a TID range scan), each matched to its payment by
// the primary key (a lookup per row: the cost follows the bill, not the payments kept), written
// as items. Money taken for nothing is not run through the pipeline again (it would record that
// money anew): it is paid_after_cancel, or matched once a discrepancy refund gave it back. No
// item's detail is written here: it is built from the item's columns and its run when read
// (bill_store.cpp's kItemColumns; migration 14 began it for matched items) and when a
// discrepancy copies it (kRecordDiscrepancies), so a million items of any outcome are narrow rows.
const std::string kItemsChunk =
    "INSERT INTO bill_item (run_id, seq, outcome, kind, payment_no, trade_no, refund_no, "
    "  gateway_amount_cents, local_amount_cents, fee_cents, completed_at, local_status, "
    "  local_trade_no, detail) "
    "SELECT $1::bigint, s.seq, s.outcome, s.kind, s.payment_no, s.trade_no, s.refund_no, "
    "  s.amount_cents, "
    "  s.local_amount, s.fee_cents, CASE WHEN s.completed_at_ms > 0 THEN "
    "  to_timestamp(s.completed_at_ms / 1000.0) END, s.status, NULLIF(s.local_trade, ''), "
    "  '{}'::jsonb "
    "FROM (SELECT x.*, "
    "  CASE WHEN x.kind = 'refund' THEN "
    "         CASE WHEN " +
    bill_refunded_in("x.status") +
    " OR x.gateway_refunded THEN 'matched' "
    "              ELSE 'refund_unknown_here' END "
    "       WHEN x.local_no IS NULL THEN 'unknown_payment' "
    "       WHEN x.dup > 1 THEN 'duplicate_trade' "
    "       WHEN " +
    bill_paid_in("x.status") +
    " AND x.local_trade NOT IN ('', x.trade_no) THEN "
    "'trade_mismatch' "
    "       WHEN x.local_amount <> x.amount_cents THEN 'amount_mismatch' "
    "       WHEN " +
    bill_paid_in("x.status") +
    " OR x.gateway_refunded THEN 'matched' "
    "       WHEN x.taken_for_nothing THEN 'paid_after_cancel' "
    "       ELSE 'repair' END AS outcome "
    "  FROM (SELECT st.*, p.payment_no AS local_no, p.status, p.amount_cents AS local_amount, "
    "          COALESCE(p.channel_trade_no, '') AS local_trade, "
    "          COALESCE(t.refunded, false) AS gateway_refunded, t.payment_no IS NOT NULL "
    "            AS taken_for_nothing, COALESCE(d.dup, 1) AS dup "
    "        FROM bill_stage st "
    "        LEFT JOIN LATERAL (SELECT o.payment_no, o.status, o.amount_cents, "
    "            o.channel_trade_no FROM payment_order o "
    "          WHERE o.payment_no = st.payment_no AND o.channel = $2 LIMIT 1) p ON true "
    "        LEFT JOIN bill_dup d ON d.seq = st.seq "
    "        LEFT JOIN bill_taken t ON t.payment_no = st.payment_no "
    "        WHERE st.ctid >= format('(%s,0)', $3::bigint)::tid "
    "          AND st.ctid < format('(%s,0)', $4::bigint)::tid) x) s";

// The latest done run of a neighbouring day (0: none).
const std::string kNeighbourRun =
    "SELECT COALESCE(max(id), 0) FROM bill_run "
    "WHERE channel = $1 AND bill_date = $2::date + $3::int AND state = " +
    status_sql::named(domain::BillRunState::done);

// What we took or gave back that the gateway's bill does not list: SUCCESS/REFUNDED payments paid
// in the day, REFUNDED payments and succeeded discrepancy refunds of the day, found in neither
// this bill nor any item (any outcome: a neighbour that recorded it missing decided it already) of
// the neighbouring days' latest done runs. A payment a bill repair paid (its callback
// `bill:<channel>:<tradeNo>`, channels::bill_callback_id) was listed by the bill of the day the
// gateway took it, whichever day that was: its paid_at is the repair's, so a bill reconciled days
// late would otherwise report it missing from the repair day's bill. The last `edge` of the day
// waits for the next day's run when it has not run yet; the previous day's edge is checked here
// when that day's run is done.
const std::string kMissingItems =
    "WITH bounds AS (SELECT to_timestamp($4::bigint / 1000.0) AS lo, to_timestamp($5::bigint / "
    "1000.0) AS hi, "
    "    to_timestamp(($5::bigint - CASE WHEN $8::bigint > 0 THEN 0 ELSE $6::bigint END) / 1000.0) "
    "AS cut, "
    "    to_timestamp(($4::bigint - CASE WHEN $7::bigint > 0 THEN $6::bigint ELSE 0 END) / 1000.0) "
    "AS early), "
    "want AS ("
    "  SELECT 'payment' AS kind, 'missing_at_gateway' AS outcome, p.payment_no, "
    "    COALESCE(p.channel_trade_no, '') AS trade_no, '' AS refund_no, p.amount_cents, "
    "    p.paid_at AS t FROM payment_order p, bounds b "
    "  WHERE p.channel = $2 AND " +
    bill_paid_in("p.status") +
    " AND p.paid_at >= b.early AND p.paid_at < b.cut "
    "  UNION ALL "
    "  SELECT 'refund', 'refund_missing_at_gateway', p.payment_no, "
    "    COALESCE(p.channel_trade_no, ''), '', p.amount_cents, p.updated_at "
    "  FROM payment_order p, bounds b "
    "  WHERE p.channel = $2 AND " +
    bill_refunded_in("p.status") +
    " AND p.updated_at >= b.early AND p.updated_at < b.cut "
    "  UNION ALL "
    "  SELECT 'refund', 'refund_missing_at_gateway', d.payment_no, '', r.refund_no, "
    "    r.amount_cents, r.settled_at "
    "  FROM refund r JOIN payment_discrepancy d ON d.id = r.discrepancy_id, bounds b "
    "  WHERE r.channel = $2 AND r.status = " +
    status_sql::literal(domain::RefundStatus::succeeded) +
    " AND r.settled_at >= b.early "
    "    AND r.settled_at < b.cut) "
    "INSERT INTO bill_item (run_id, seq, outcome, kind, payment_no, trade_no, refund_no, "
    "  gateway_amount_cents, local_amount_cents, fee_cents, completed_at, detail) "
    "SELECT $1, $9::bigint + row_number() OVER (ORDER BY w.t, w.payment_no, w.kind), w.outcome, "
    "w.kind, "
    "  w.payment_no, w.trade_no, w.refund_no, NULL, w.amount_cents, 0, w.t, "
    "  jsonb_build_object('source', 'bill', 'runId', $1::bigint, 'channel', $2::text, 'billDate', "
    "$3::text, "
    "    'tradeNo', w.trade_no, 'refundNo', NULLIF(w.refund_no, ''), 'localAmountCents', "
    "    w.amount_cents, 'at', w.t) "
    "FROM want w "
    "WHERE NOT EXISTS (SELECT 1 FROM bill_stage s WHERE s.kind = w.kind "
    "                  AND s.payment_no = w.payment_no) "
    "  AND NOT EXISTS (SELECT 1 FROM bill_item i WHERE i.run_id IN ($7, $8) AND i.kind = w.kind "
    "                  AND i.payment_no = w.payment_no) "
    "  AND NOT (w.kind = 'payment' AND EXISTS (SELECT 1 FROM payment_callback_log c "
    "           WHERE c.callback_id = 'bill:' || $2::text || ':' || w.trade_no))";

// The discrepancy kinds of the run's items of seq [$4, $5), once per payment, kind and bill day (a
// rerun, or a resolved one, opens nothing again), each with its discrepancy.recorded event: a
// chunk's statement emits one message of at most $5 - $4 events. Each item looks up its payment
// (for the order) and an earlier discrepancy of its day by key, a LATERAL … LIMIT 1 each (an
// index probe per item): planned as joins, a chunk of 10 000 items hashed all of a million-row
// payment_order (0.34 s), and its test for an earlier discrepancy became a scan of the
// payment_discrepancy rows earlier chunks wrote for each item (16 s for the second chunk) when
// the table's statistics were taken before the run.
const std::string kRecordDiscrepancies = events::with_event(
    "INSERT INTO payment_discrepancy AS d (payment_no, order_no, kind, detail) "
    "SELECT x.no, p.order_no, x.outcome, CASE WHEN x.detail ? 'source' THEN x.detail ELSE "
    "  jsonb_build_object('source', 'bill', 'runId', x.run_id, 'channel', $2::text, "
    "    'billDate', $3::text, 'tradeNo', x.trade_no, 'gatewayAmountCents', "
    "    x.gateway_amount_cents, 'localAmountCents', x.local_amount_cents, 'localStatus', "
    "    x.local_status, 'localTradeNo', x.local_trade_no) || x.detail END "
    "FROM (SELECT i.seq, i.run_id, i.outcome, i.payment_no, i.trade_no, i.gateway_amount_cents, "
    "        i.local_amount_cents, i.local_status, i.local_trade_no, i.detail, "
    "        CASE WHEN i.payment_no = '' THEN 'trade:' || i.trade_no ELSE i.payment_no END AS no "
    "      FROM bill_item i WHERE i.run_id = $1 AND i.seq >= $4 AND i.seq < $5 "
    "        AND i.outcome IN ('unknown_payment', 'amount_mismatch', 'trade_mismatch', "
    "          'duplicate_trade', 'missing_at_gateway', 'refund_unknown_here', "
    "          'refund_missing_at_gateway')) x "
    "LEFT JOIN LATERAL (SELECT o.order_no FROM payment_order o "
    "  WHERE o.payment_no = x.payment_no LIMIT 1) p ON true "
    "LEFT JOIN LATERAL (SELECT true AS found FROM payment_discrepancy o "
    "  WHERE o.payment_no = x.no AND o.kind = x.outcome AND o.detail ->> 'source' = 'bill' "
    "    AND o.detail ->> 'channel' = $2 AND o.detail ->> 'billDate' = $3 LIMIT 1) e ON true "
    "WHERE e.found IS NULL "
    "ORDER BY x.seq "
    "ON CONFLICT (payment_no, kind) WHERE resolved_at IS NULL DO NOTHING "
    "RETURNING d.id::text AS event_key, d.payment_no, d.order_no, "
    "  COALESCE((d.detail ->> 'gatewayAmountCents')::bigint, "
    "           (d.detail ->> 'localAmountCents')::bigint) AS amount_cents, d.kind AS detail",
    events::kDiscrepancyRecorded, "count(*)");
// A chunk of discrepancies is planned above jit_above_cost (its probes per item), and compiling it
// cost more than it saved in a statement this short: 5.6 s of CPU for 200 000 discrepancies in
// chunks of 10 000 with it, 5.1 s without.
constexpr const char* kNoJit = "SET LOCAL jit = off";

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

Failure load_failed(PgSession& pg, const char* operation, const std::exception& error) {
  pg.reset_if_broken(error);
  logger().warn("event=store_unavailable operation={} error_class={} error={}", operation,
                classify(error) == PgErrorClass::retryable ? "retryable" : "permanent",
                observability::quoted_value(error.what()));
  return refused(errc::pg_unavailable, "storage unavailable");
}

}  // namespace

const std::string& bill_record_discrepancies_sql() {
  return kRecordDiscrepancies;
}

struct BillLoad::Impl {
  explicit Impl(PgSession& session) : pg(session), call(pg.watch_call()) {
    pqxx::nontransaction(pg.connection()).exec(kDropWork);
    tx.emplace(pg.connection());
    tx->exec(kCreateStage);
    stream.emplace(*tx, "bill_stage",
                   std::vector<std::string>{"seq", "kind", "trade_no", "payment_no", "refund_no",
                                            "amount_cents", "fee_cents", "completed_at_ms"});
  }
  // The staged rows' statistics, the trades resolved, duplicates ranked (each only when some row
  // needs it), the money taken for nothing; the staging table's pages.
  std::int64_t prepare(const BillMatchScope& scope) {
    // Sorted before the transaction opens, so it never sits idle while we sort.
    const bool may_repeat = keys.may_repeat();
    pqxx::work work(pg.connection());
    work.exec(kWorkMem);
    work.exec(kAnalyzeStage);
    if (keys.unresolved()) {
      (void)work.exec_params(kResolveTrades, scope.channel);
    }
    if (may_repeat) {
      (void)work.exec_params(kRankDuplicates, scope.channel);
      work.exec(kIndexDuplicates);
    } else {
      work.exec(kNoDuplicates);
    }
    work.exec(kTakenForNothing);
    work.exec(kIndexTaken);
    work.exec(kAnalyzeWork);
    const auto blocks = work.exec1(kStageBlocks)[0].as<std::int64_t>();
    work.commit();
    return blocks;
  }
  // The items in chunks of about scope.chunk_rows rows (`blocks` pages of the staging table), each
  // its own transaction: a million rows never sit in one transaction that every callback's commit
  // and the event slot's decoding would wait behind. False once `pace` asks the run to stop.
  bool write_items(const BillMatchScope& scope, const BillPace& pace, std::int64_t blocks,
                   BillLoadCounts& counts) {
    const auto per_block = std::max<std::int64_t>(1, rows / std::max<std::int64_t>(1, blocks));
    const auto step = std::max<std::int64_t>(1, scope.chunk_rows / per_block);
    for (std::int64_t first = 0; first < blocks; first += step) {
      const auto started = Clock::now();
      pqxx::work tx(pg.connection());
      counts.items += tx.exec_params(kItemsChunk, scope.run_id, scope.channel, first, first + step)
                          .affected_rows();
      tx.commit();
      ++counts.chunks;
      counts.writes += since(started);
      if (!pace(Clock::now() - started)) {
        return false;
      }
    }
    return true;
  }
  // The day's missing items (one statement, no event), then the discrepancies of every item (the
  // bill's rows' and the missing ones: seq 1 to rows + missing) in chunks of scope.chunk_rows
  // items, each its own transaction and event message, paced like the items. A run stopped
  // between them is failed with some discrepancies recorded; a later run of the day records the
  // rest (it skips what an earlier run of the day recorded). False once `pace` asks to stop.
  bool record(const BillMatchScope& scope, const BillPace& pace, BillLoadCounts& counts) {
    auto started = Clock::now();
    const auto missing = record_missing(scope);
    counts.items += missing;
    counts.records += since(started);
    if (!pace(Clock::now() - started)) {
      return false;
    }
    const auto last = rows + missing;
    const auto step = std::max<std::int64_t>(1, scope.chunk_rows);
    for (std::int64_t first = 1; first <= last; first += step) {
      started = Clock::now();
      pqxx::work tx(pg.connection());
      tx.exec(kNoJit);
      (void)tx.exec_params(kRecordDiscrepancies, scope.run_id, scope.channel, scope.bill_date,
                           first, first + step);
      tx.commit();
      ++counts.record_chunks;
      counts.records += since(started);
      // No rest after the last: the run's load is done.
      if (first + step <= last && !pace(Clock::now() - started)) {
        return false;
      }
    }
    return true;
  }
  // The missing items, numbered after the bill's rows; how many.
  std::int64_t record_missing(const BillMatchScope& scope) {
    pqxx::work work(pg.connection());
    work.exec(kWorkMem);
    const auto prev =
        work.exec_params1(kNeighbourRun, scope.channel, scope.bill_date, -1)[0].as<std::int64_t>();
    const auto next =
        work.exec_params1(kNeighbourRun, scope.channel, scope.bill_date, 1)[0].as<std::int64_t>();
    const auto missing =
        work.exec_params(kMissingItems, scope.run_id, scope.channel, scope.bill_date,
                         scope.start_ms, scope.end_ms, static_cast<std::int64_t>(scope.edge_ms),
                         prev, next, rows)
            .affected_rows();
    work.commit();
    return static_cast<std::int64_t>(missing);
  }

  PgSession& pg;
  CallScope call;
  // The load's transaction, from the staging table's creation to the end of its COPY.
  std::optional<pqxx::work> tx;
  std::optional<pqxx::stream_to> stream;
  std::int64_t rows = 0;
  BillKeys keys;
  bool broken = false;
};

BillLoad::BillLoad(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

BillLoad::~BillLoad() {
  if (!impl_) {
    return;
  }
  // The COPY must end before the transaction aborts; the work tables go with the run. An error
  // here changes nothing more (a broken connection took them already).
  try {
    if (impl_->stream) {
      impl_->stream->complete();
    }
  } catch (const std::exception&) {
    impl_->broken = true;
  }
  try {
    impl_->stream.reset();
    impl_->tx.reset();
    if (!impl_->broken) {
      pqxx::nontransaction(impl_->pg.connection()).exec(kDropWork);
    }
  } catch (const std::exception& error) {
    impl_->pg.reset_if_broken(error);
  }
}

Result<void> BillLoad::row(const BillLoadRow& row) {
  if (impl_->broken || !impl_->stream) {
    return refused(errc::pg_unavailable, "storage unavailable");
  }
  try {
    *impl_->stream << std::make_tuple(impl_->rows + 1, std::string(row.kind),
                                      std::string(row.trade_no), std::string(row.payment_no),
                                      std::string(row.refund_no), row.amount_cents, row.fee_cents,
                                      row.completed_at_ms);
    impl_->keys.add(row.kind, row.payment_no);
    ++impl_->rows;
    return {};
  } catch (const std::exception& error) {
    impl_->broken = true;
    return load_failed(impl_->pg, "bill_load_row", error);
  }
}

Result<BillLoadCounts> BillLoad::match(const BillMatchScope& scope, const BillPace& pace) {
  if (impl_->broken || !impl_->stream) {
    return refused(errc::pg_unavailable, "storage unavailable");
  }
  BillLoadCounts counts{impl_->rows, 0};
  try {
    // The whole bill is staged and the dialect proved it whole: from here the work is paced.
    impl_->stream->complete();
    impl_->stream.reset();
    impl_->tx->commit();
    impl_->tx.reset();
    const auto started = Clock::now();
    const auto blocks = impl_->prepare(scope);
    counts.prepare = since(started);
    if (!pace(Clock::now() - started) || !impl_->write_items(scope, pace, blocks, counts) ||
        !impl_->record(scope, pace, counts)) {
      return refused(errc::deadline_exceeded, "the run was stopped");
    }
    return counts;
  } catch (const pqxx::in_doubt_error& error) {
    impl_->broken = true;
    impl_->pg.reset_if_broken(error);
    return refused(errc::commit_unknown, "the commit's answer was lost");
  } catch (const std::exception& error) {
    impl_->broken = true;
    return load_failed(impl_->pg, "bill_match", error);
  }
}

Result<std::unique_ptr<BillLoad>> BillStore::load() {
  try {
    return std::unique_ptr<BillLoad>(new BillLoad(std::make_unique<BillLoad::Impl>(pg_)));
  } catch (const std::exception& error) {
    return load_failed(pg_, "bill_load", error);
  }
}

}  // namespace seatflow::persistence

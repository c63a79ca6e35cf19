// Discrepancy refunds (table refund, source 'discrepancy'): the refund row before the gateway call,
// then each attempt's outcome; SQL as named constants, every call under the session's deadline,
// libpqxx errors caught at this border.
#include "persistence/stores/refund_store.hpp"

#include <cassert>

#include "domain/assert.hpp"
#include "domain/ids.hpp"
#include "persistence/drivers/log.hpp"
#include "persistence/stores/events.hpp"
#include "persistence/stores/guarded.hpp"
#include "persistence/stores/order_store.hpp"
#include "persistence/stores/sql.hpp"
#include "persistence/stores/status_sql.hpp"

namespace seatflow::persistence {
namespace {

// The payment row first (sql::kLockPaymentOfDiscrepancy), as every writer locks it, then the
// discrepancy: two statements, so the order does not depend on the join's plan.
constexpr const char* kLockDiscrepancy =
    "SELECT d.payment_no, COALESCE(d.order_no, ''), d.kind, d.resolved_at IS NOT NULL, "
    "  p.channel, p.amount_cents, "
    "  COALESCE(NULLIF(d.detail->>'channel_trade_no', ''), p.channel_trade_no, '') "
    "FROM payment_discrepancy d JOIN payment_order p ON p.payment_no = d.payment_no "
    "WHERE d.id = $1 FOR UPDATE OF d";
// The existing refund, and whether an attempt holds it: one is out and its lease still runs.
constexpr const char* kLockRefund =
    "SELECT refund_no, status, attempt_finished_at IS NULL AND "
    "  attempt_started_at > now() - $2 * interval '1 millisecond', attempts, channel, "
    "  amount_cents "
    "FROM refund WHERE discrepancy_id = $1 FOR UPDATE";
using domain::RefundEvent;
using domain::RefundStatus;
using status_sql::literal;

// A discrepancy's refund is money only, its reason the discrepancy's kind, its order the
// payment's.
const std::string kInsertRefund =
    "INSERT INTO refund (refund_no, payment_no, order_no, channel, amount_cents, reason, source, "
    "  status, discrepancy_id) "
    "SELECT $2, p.payment_no, p.order_no, $3, $4, d.kind, 'discrepancy', " +
    literal(RefundStatus::pending) +
    ", d.id "
    "FROM payment_discrepancy d JOIN payment_order p ON p.payment_no = d.payment_no "
    "WHERE d.id = $1";
// A failed or abandoned attempt made again under the refund's number: the refund stays PENDING
// (no move of SPEC §4), a new attempt holds it.
const std::string kRetakeRefund =
    "UPDATE refund SET attempt_started_at = now(), attempt_finished_at = NULL, "
    "  attempts = attempts + 1, updated_at = now() "
    "WHERE discrepancy_id = $1 AND " +
    status_sql::in("status", std::vector{RefundStatus::pending}) + " RETURNING attempts";

// The refund's move (domain::refund_transition) writes its event (keyed by the discrepancy: one
// refund each).
const std::string kRefundSucceeded = [] {
  const auto move = domain::refund_transition(RefundEvent::succeed);
  return events::with_event(
      "UPDATE refund r SET status = " + literal(move.to) +
          ", gateway_note = $3, failure_reason = NULL, "
          "  gateway_refund_id = NULLIF($4, ''), accepted_at = COALESCE(r.accepted_at, now()), "
          "  settled_at = now(), attempt_finished_at = now(), updated_at = now() "
          "FROM payment_discrepancy d "
          "WHERE r.discrepancy_id = $1 AND r.refund_no = $2 AND " +
          status_sql::in("r.status", move.from) +
          " AND d.id = r.discrepancy_id "
          "RETURNING r.discrepancy_id::text AS event_key, d.payment_no, d.order_no, "
          "  r.amount_cents, r.refund_no AS detail",
      events::kDiscrepancyRefunded, "event_key");
}();
constexpr const char* kResolveRefunded =
    "UPDATE payment_discrepancy SET resolved_at = now() WHERE id = $1 AND resolved_at IS NULL";
// An attempt that failed: the refund stays PENDING with the reason, for a retry under its number.
const std::string kRefundAttemptFailed =
    "UPDATE refund SET failure_reason = $3, attempt_finished_at = now(), updated_at = now() "
    "WHERE discrepancy_id = $1 AND refund_no = $2 AND " +
    status_sql::in("status", std::vector{RefundStatus::pending});

}  // namespace

bool refundable_kind(std::string_view kind) {
  return kind == "paid_after_cancel" || kind == "paid_after_refund";
}

RefundStore::RefundStore(PgSession& pg) : pg_(pg) {}

Result<RefundAttempt> RefundStore::begin(
    std::int64_t discrepancy_id, std::uint32_t lease_ms,
    const std::function<std::string(domain::Channel)>& channel_refusal) {
  SEATFLOW_ASSERT(discrepancy_id > 0);
  SEATFLOW_ASSERT(lease_ms > 0);
  return guarded<RefundAttempt>(pg_, "refund_begin", [&]() -> Result<RefundAttempt> {
    pqxx::work tx(pg_.connection());
    (void)tx.exec_params(sql::kLockPaymentOfDiscrepancy, discrepancy_id);
    const auto rows = tx.exec_params(kLockDiscrepancy, discrepancy_id);
    if (rows.empty()) {
      if (tx.exec_params(sql::kDiscrepancyExists, discrepancy_id).empty()) {
        return refused(errc::not_found, "unknown discrepancy");
      }
      return refused(errc::conflict, "the discrepancy has no payment to refund");
    }
    const auto& row = rows[0];
    RefundAttempt attempt;
    attempt.discrepancy_id = discrepancy_id;
    attempt.payment_no = row[0].as<std::string>();
    attempt.order_no = row[1].as<std::string>();
    attempt.kind = row[2].as<std::string>();
    const auto channel = domain::parse_channel(row[4].as<std::string>());
    assert(channel && "payment_order.channel is CHECKed");
    attempt.channel = *channel;
    attempt.amount_cents = row[5].as<std::int64_t>();
    attempt.trade_no = row[6].as<std::string>();
    const auto refund = tx.exec_params(kLockRefund, discrepancy_id, lease_ms);
    const bool attempted = !refund.empty();
    const auto stored =
        attempted ? stored_refund_status(refund[0][1].as<int>()) : RefundStatus::pending;
    if (attempted && stored == RefundStatus::succeeded) {
      return refused(errc::conflict, "the discrepancy is already refunded");
    }
    if (row[3].as<bool>()) {
      return refused(errc::conflict, "the discrepancy is already resolved");
    }
    if (!refundable_kind(attempt.kind)) {
      return refused(errc::conflict,
                     "only paid_after_cancel and paid_after_refund discrepancies can be refunded");
    }
    if (const auto refusal = channel_refusal(attempt.channel); !refusal.empty()) {
      return refused(errc::conflict, refusal);
    }
    if (refund.empty()) {
      attempt.refund_no = new_id("rfd");
      attempt.attempts = 1;
      const auto inserted =
          tx.exec_params(kInsertRefund, discrepancy_id, attempt.refund_no,
                         std::string(domain::to_string(attempt.channel)), attempt.amount_cents);
      SEATFLOW_ASSERT(inserted.affected_rows() == 1);
    } else {
      // PROCESSING or ABNORMAL: the gateway holds it; asking again would not make it sooner.
      if (stored != RefundStatus::pending || refund[0][2].as<bool>()) {
        return refused(errc::conflict, "a refund of this discrepancy is in flight");
      }
      // A failed or abandoned attempt again: its number, its channel and amount, never new ones.
      attempt.refund_no = refund[0][0].as<std::string>();
      attempt.amount_cents = refund[0][5].as<std::int64_t>();
      attempt.attempts = tx.exec_params1(kRetakeRefund, discrepancy_id)[0].as<int>();
    }
    tx.commit();
    return attempt;
  });
}

Result<void> RefundStore::succeed(const RefundAttempt& attempt, std::string_view reason,
                                  std::string_view gateway_refund_no) {
  SEATFLOW_ASSERT(attempt.discrepancy_id > 0);
  SEATFLOW_ASSERT(domain::is_id(attempt.refund_no));
  return guarded<void>(pg_, "refund_succeed", [&]() -> Result<void> {
    pqxx::work tx(pg_.connection());
    (void)tx.exec_params(sql::kLockPaymentOfDiscrepancy, attempt.discrepancy_id);
    (void)tx.exec_params(kRefundSucceeded, attempt.discrepancy_id, attempt.refund_no,
                         std::string(reason), std::string(gateway_refund_no));
    (void)tx.exec_params(kResolveRefunded, attempt.discrepancy_id);
    tx.commit();
    return {};
  });
}

Result<void> RefundStore::fail(const RefundAttempt& attempt, std::string_view reason) {
  SEATFLOW_ASSERT(attempt.discrepancy_id > 0);
  SEATFLOW_ASSERT(domain::is_id(attempt.refund_no));
  return guarded<void>(pg_, "refund_fail", [&]() -> Result<void> {
    pqxx::work tx(pg_.connection());
    (void)tx.exec_params(kRefundAttemptFailed, attempt.discrepancy_id, attempt.refund_no,
                         std::string(reason));
    tx.commit();
    return {};
  });
}

Result<DiscrepancyRow> RefundStore::discrepancy(std::int64_t discrepancy_id) {
  SEATFLOW_ASSERT(discrepancy_id > 0);
  static const std::string kOne = std::string(kDiscrepancyRowSelect) + "WHERE d.id = $1";
  return guarded<DiscrepancyRow>(pg_, "refund_discrepancy", [&]() -> Result<DiscrepancyRow> {
    pqxx::read_transaction tx(pg_.connection());
    const auto rows = tx.exec_params(kOne, discrepancy_id);
    if (rows.empty()) {
      return refused(errc::not_found, "unknown discrepancy");
    }
    return discrepancy_row(rows[0]);
  });
}

Result<std::vector<std::int64_t>> RefundStore::unrefunded_paid_after_cancel(std::size_t limit) {
  SEATFLOW_ASSERT(limit > 0);
  static constexpr const char* kDue =
      "SELECT d.id FROM payment_discrepancy d "
      "WHERE d.kind = 'paid_after_cancel' AND d.resolved_at IS NULL AND NOT EXISTS ("
      "  SELECT 1 FROM refund r WHERE r.discrepancy_id = d.id) "
      "ORDER BY d.id LIMIT $1";
  return guarded<std::vector<std::int64_t>>(pg_, "refund_auto_due", [&] {
    pqxx::read_transaction tx(pg_.connection());
    std::vector<std::int64_t> ids;
    for (const auto& row : tx.exec_params(kDue, limit)) {
      ids.push_back(row[0].as<std::int64_t>());
    }
    return ids;
  });
}

}  // namespace seatflow::persistence

// The payment_query statements: a SKIP LOCKED lease, attempt records, the sweeper's postponement.
#include "persistence/stores/query_store.hpp"

#include <cassert>

#include "domain/assert.hpp"
#include "domain/ids.hpp"
#include "persistence/stores/guarded.hpp"

namespace seatflow::persistence {
namespace {

constexpr const char* kClaimDue =
    "WITH due AS ("
    "  SELECT q.payment_no FROM payment_query q WHERE q.next_at <= now() "
    "  ORDER BY q.next_at LIMIT $1 FOR UPDATE SKIP LOCKED) "
    "UPDATE payment_query q SET next_at = now() + $2 * interval '1 millisecond' "
    "FROM due, payment_order p "
    "WHERE q.payment_no = due.payment_no AND p.payment_no = q.payment_no "
    "RETURNING q.payment_no, p.channel, p.amount_cents, p.status = $3, q.attempts";
constexpr const char* kLoad =
    "SELECT p.payment_no, p.channel, p.amount_cents, p.status = $2, COALESCE(q.attempts, 0) "
    "FROM payment_order p LEFT JOIN payment_query q ON q.payment_no = p.payment_no "
    "WHERE p.payment_no = $1";
constexpr const char* kRecord =
    "INSERT INTO payment_query AS q (payment_no, attempts, next_at, last_result, last_at) "
    "VALUES ($1, 1, COALESCE(now() + $3 * interval '1 millisecond', 'infinity'), $2, now()) "
    "ON CONFLICT (payment_no) DO UPDATE SET attempts = q.attempts + 1, "
    "  next_at = EXCLUDED.next_at, last_result = EXCLUDED.last_result, last_at = now()";
constexpr const char* kDefer =
    "UPDATE payment_query SET next_at = now() + $2 * interval '1 millisecond' "
    "WHERE payment_no = $1";
constexpr const char* kPostpone =
    "WITH taken AS ("
    "  UPDATE payment_query SET sweep_delayed = true "
    "  WHERE payment_no = $1 AND NOT sweep_delayed RETURNING payment_no) "
    "UPDATE order_info o SET expires_at = now() + $2 * interval '1 millisecond', updated_at = "
    "now() "
    "FROM payment_order p, taken "
    "WHERE p.payment_no = taken.payment_no AND o.order_no = p.order_no AND o.status = $3 "
    "RETURNING o.order_no";

DueQuery due_of(const pqxx::row& row) {
  const auto channel = domain::parse_channel(row[1].as<std::string>());
  assert(channel);  // the CHECK constraint bounds the column
  return {row[0].as<std::string>(), *channel, row[2].as<std::int64_t>(), row[3].as<bool>(),
          row[4].as<int>()};
}

constexpr int kPending = static_cast<int>(domain::PaymentStatus::pending);

}  // namespace

QueryStore::QueryStore(PgSession& pg) : pg_(pg) {}

Result<std::vector<DueQuery>> QueryStore::claim_due(std::size_t limit, std::uint32_t lease_ms) {
  SEATFLOW_ASSERT(limit > 0);
  SEATFLOW_ASSERT(lease_ms > 0);
  return guarded<std::vector<DueQuery>>(pg_, "query_claim_due", [&] {
    pqxx::work tx(pg_.connection());
    std::vector<DueQuery> out;
    for (const auto& row : tx.exec_params(kClaimDue, limit, lease_ms, kPending)) {
      out.push_back(due_of(row));
    }
    tx.commit();
    return out;
  });
}

Result<DueQuery> QueryStore::load(const std::string& payment_no) {
  SEATFLOW_ASSERT(domain::is_id(payment_no));
  return guarded<DueQuery>(pg_, "query_load", [&]() -> Result<DueQuery> {
    pqxx::read_transaction tx(pg_.connection());
    const auto rows = tx.exec_params(kLoad, payment_no, kPending);
    if (rows.empty()) {
      return refused(errc::not_found, "unknown payment");
    }
    return due_of(rows[0]);
  });
}

Result<void> QueryStore::record(const std::string& payment_no, std::string_view result,
                                std::optional<std::uint32_t> next_delay_ms) {
  SEATFLOW_ASSERT(domain::is_id(payment_no));
  return guarded<void>(pg_, "query_record", [&] {
    pqxx::work tx(pg_.connection());
    tx.exec_params(kRecord, payment_no, std::string(result), next_delay_ms);
    tx.commit();
  });
}

Result<void> QueryStore::defer(const std::string& payment_no, std::uint32_t delay_ms) {
  SEATFLOW_ASSERT(domain::is_id(payment_no));
  return guarded<void>(pg_, "query_defer", [&] {
    pqxx::work tx(pg_.connection());
    tx.exec_params(kDefer, payment_no, delay_ms);
    tx.commit();
  });
}

Result<bool> QueryStore::postpone_expiry(const std::string& payment_no, std::uint32_t delay_ms) {
  SEATFLOW_ASSERT(domain::is_id(payment_no));
  return guarded<bool>(pg_, "query_postpone_expiry", [&] {
    pqxx::work tx(pg_.connection());
    const auto moved = tx.exec_params(kPostpone, payment_no, delay_ms,
                                      static_cast<int>(domain::OrderStatus::pending));
    tx.commit();
    return !moved.empty();
  });
}

}  // namespace seatflow::persistence

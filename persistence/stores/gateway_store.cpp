// The payment_gateway statements: a payment's subject, the confirmed creation, deferred closes.
#include "persistence/stores/gateway_store.hpp"

#include "domain/assert.hpp"
#include "domain/ids.hpp"
#include "persistence/stores/guarded.hpp"

namespace seatflow::persistence {
namespace {

constexpr const char* kSubject =
    "SELECT p.payment_no, p.channel, p.amount_cents, p.status = $2, COALESCE(q.attempts, 0), "
    "  p.order_no, COALESCE((extract(epoch FROM o.expires_at) * 1000)::bigint, 0), g.pay::text, "
    "  COALESCE(g.gateway_ref, '') "
    "FROM payment_order p JOIN order_info o ON o.order_no = p.order_no "
    "LEFT JOIN payment_query q ON q.payment_no = p.payment_no "
    "LEFT JOIN payment_gateway g ON g.payment_no = p.payment_no "
    "WHERE p.payment_no = $1";
constexpr const char* kRecordCreated =
    "INSERT INTO payment_gateway AS g (payment_no, pay, gateway_ref) "
    "VALUES ($1, $2::jsonb, NULLIF($3, '')) "
    "ON CONFLICT (payment_no) DO UPDATE SET pay = EXCLUDED.pay, "
    "  gateway_ref = COALESCE(EXCLUDED.gateway_ref, g.gateway_ref), updated_at = now()";
constexpr const char* kDeferClose =
    "INSERT INTO payment_gateway AS g (payment_no, close_attempts, close_next_at) "
    "VALUES ($1, 1, now() + $2 * interval '1 millisecond') "
    "ON CONFLICT (payment_no) DO UPDATE SET close_attempts = g.close_attempts + 1, "
    "  close_next_at = EXCLUDED.close_next_at, updated_at = now()";

constexpr int kPendingPayment = static_cast<int>(domain::PaymentStatus::pending);

}  // namespace

GatewayStore::GatewayStore(PgSession& pg) : pg_(pg) {}

Result<GatewaySubject> GatewayStore::subject(const std::string& payment_no) {
  SEATFLOW_ASSERT(domain::is_id(payment_no));
  return guarded<GatewaySubject>(pg_, "gateway_subject", [&]() -> Result<GatewaySubject> {
    pqxx::read_transaction tx(pg_.connection());
    const auto rows = tx.exec_params(kSubject, payment_no, kPendingPayment);
    if (rows.empty()) {
      return refused(errc::not_found, "unknown payment");
    }
    const auto& row = rows[0];
    const auto channel = domain::parse_channel(row[1].as<std::string>());
    SEATFLOW_ASSERT(channel.has_value());  // the CHECK constraint bounds the column
    GatewaySubject subject;
    subject.payment = {row[0].as<std::string>(), *channel, row[2].as<std::int64_t>(),
                       row[3].as<bool>(), row[4].as<int>()};
    subject.order_no = row[5].as<std::string>();
    subject.expires_at_ms = row[6].as<std::int64_t>();
    subject.pay = optional_of<std::string>(row[7]);
    subject.gateway_ref = row[8].as<std::string>();
    return subject;
  });
}

Result<void> GatewayStore::record_created(const std::string& payment_no,
                                          const std::string& pay_json,
                                          const std::string& gateway_ref) {
  SEATFLOW_ASSERT(domain::is_id(payment_no));
  return guarded<void>(pg_, "gateway_record_created", [&] {
    pqxx::work tx(pg_.connection());
    (void)tx.exec_params(kRecordCreated, payment_no, pay_json, gateway_ref);
    tx.commit();
  });
}

Result<void> GatewayStore::defer_close(const std::string& payment_no, std::uint32_t delay_ms) {
  SEATFLOW_ASSERT(domain::is_id(payment_no));
  SEATFLOW_ASSERT(delay_ms > 0);
  return guarded<void>(pg_, "gateway_defer_close", [&] {
    pqxx::work tx(pg_.connection());
    (void)tx.exec_params(kDeferClose, payment_no, delay_ms);
    tx.commit();
  });
}

}  // namespace seatflow::persistence

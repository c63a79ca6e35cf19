// Bounded deletes by key; each batch is its own short transaction.
#include "persistence/jobs/retention.hpp"

#include "persistence/drivers/log.hpp"

namespace seatflow::persistence {
namespace {

// SKIP LOCKED: a row a callback holds right now is left for the next batch instead of making
// either side wait.
constexpr const char* kPurgeCallbackLogs =
    "DELETE FROM payment_callback_log WHERE callback_id IN ("
    "  SELECT callback_id FROM payment_callback_log "
    "  WHERE received_at < now() - $1 * interval '1 millisecond' "
    "  ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED)";

}  // namespace

RetentionStore::RetentionStore(PgSession& pg) : pg_(pg) {}

Result<Purged> RetentionStore::purge_once(std::int64_t horizon_ms, std::size_t batch) {
  try {
    Purged result;
    {
      pqxx::work tx(pg_.connection());
      result.callback_logs = tx.exec_params0(kPurgeCallbackLogs, horizon_ms, batch).affected_rows();
      tx.commit();
    }
    return result;
  } catch (const std::exception& error) {
    if (!pg_.connected() || dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr) {
      pg_.reset();
    }
    logger().warn("event=retention_failed reason=pg_unavailable");
    return refused(errc::pg_unavailable, "storage unavailable");
  }
}

}  // namespace seatflow::persistence

// Retention: removes callback-log rows older than a horizon, in bounded batches that skip rows a
// callback holds, so a purge never blocks the callback path. Payment events need none: they live
// in the WAL until the relay confirms the slot past them.
#pragma once

#include <cstdint>
#include "persistence/drivers/errc.hpp"
#include "persistence/drivers/pg.hpp"

namespace seatflow::persistence {

// What one purge removed.
struct Purged {
  std::size_t callback_logs = 0;  // payment_callback_log rows removed
};

class RetentionStore {
 public:
  explicit RetentionStore(PgSession& pg);

  // Removes at most `batch` log rows whose age (received_at) passed `horizon_ms`;
  // errc::pg_unavailable when PostgreSQL is unavailable.
  [[nodiscard]] Result<Purged> purge_once(std::int64_t horizon_ms, std::size_t batch);

 private:
  PgSession& pg_;
};

}  // namespace seatflow::persistence

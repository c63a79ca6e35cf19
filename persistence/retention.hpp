// Retention: removes published payment events and callback-log rows older than a horizon, in
// bounded batches that skip rows a callback holds, so a purge never blocks the callback path.
// Unpublished events are never removed, whatever their age.
#pragma once

#include <cstdint>
#include <optional>

#include "persistence/pg.hpp"

namespace seatflow::persistence {

struct PurgeResult {
  std::size_t events = 0;         // published payment_event rows removed
  std::size_t callback_logs = 0;  // payment_callback_log rows removed
};

class RetentionStore {
 public:
  explicit RetentionStore(PgSession& pg);

  // Removes at most `batch` rows of each table whose age passed `horizon_ms` (events by
  // published_at, log rows by received_at); nullopt when PostgreSQL is unavailable.
  [[nodiscard]] std::optional<PurgeResult> purge_once(std::int64_t horizon_ms, std::size_t batch);

 private:
  PgSession& pg_;
};

}  // namespace seatflow::persistence

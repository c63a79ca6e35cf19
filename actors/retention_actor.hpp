// Retention actor: removes callback-log rows past the horizon, in bounded
// batches, one batch per message; spawned detached (blocking libpqxx calls).
#pragma once

#include <memory>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/persistence_actor.hpp"
#include "persistence/jobs/retention.hpp"

namespace seatflow::actors {

struct RetentionSettings {
  bool enabled = true;  // SEATFLOW_RETENTION
  // 30 days: longer than any gateway's retry window (Alipay about 25 h, WeChat Pay about 24 h).
  std::int64_t horizon_ms = 30LL * 24 * 3600 * 1000;
  std::uint32_t interval_ms = 60'000;
  std::size_t batch = 1'000;      // rows per table per batch
  std::size_t batches_max = 100;  // batches per run, so one run is bounded
};

struct RetentionState {
  static inline const char* name = "seatflow.retention";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RetentionStore> store;
  std::size_t batches = 0;
  persistence::Purged removed;  // totals of the current run
};

// RetentionActor: retain_atom; one purge batch, then the next batch at once while rows remain (up
// to batches_max), else after interval_ms.
[[nodiscard]] RetentionActor::behavior_type retention_actor(
    RetentionActor::stateful_pointer<RetentionState> self, StoreSettings store,
    RetentionSettings settings);

}  // namespace seatflow::actors

// The outbox relay: publishes unpublished payment events to a Redis Stream with XADD, in seq
// order, then marks them published; at-least-once (a crash between the two republishes a batch
// with the same event ids). Blocking calls: used only from a detached actor and tests.
#pragma once

#include <cstdint>
#include <string>

#include "persistence/pg.hpp"
#include "persistence/redis.hpp"

namespace seatflow::persistence {

struct RelaySettings {
  std::string stream = "seatflow:events";
  std::size_t stream_maxlen = 1'000'000;  // XADD MAXLEN ~ bound of the stream
  std::size_t batch = 500;                // events per PostgreSQL transaction and Redis pipeline
};

enum class RelayStatus : std::uint8_t {
  published,          // `published` events went out (the batch may have been partial)
  idle,               // nothing to publish
  busy,               // another engine's relay holds the relay lock
  pg_unavailable,     // nothing known; try again later
  redis_unavailable,  // events wait in PostgreSQL
};

struct RelayResult {
  RelayStatus status = RelayStatus::pg_unavailable;
  std::size_t published = 0;
  // Age of the oldest unpublished event when the batch was read (0 when none); < 0 = unknown.
  double lag_seconds = -1;
};

class EventRelay {
 public:
  EventRelay(PgSession& pg, RedisClient& redis, RelaySettings settings, Failpoints* failpoints);

  // Publishes at most one batch. One relay publishes at a time across every engine (a
  // transaction-scoped advisory lock), so a payment's events reach the stream in the order its
  // moves committed: a payment's moves are serialised by its row lock, so their seq order is their
  // commit order. Never throws.
  [[nodiscard]] RelayResult relay_once();

 private:
  RelayResult run_batch();

  PgSession& pg_;
  RedisClient& redis_;
  RelaySettings settings_;
  Failpoints* failpoints_;
};

}  // namespace seatflow::persistence

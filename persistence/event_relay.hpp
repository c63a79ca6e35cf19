// The outbox relay: reads the event messages that the moves wrote into the WAL from a logical
// replication slot (pgoutput, in commit order), XADDs them to a Redis Stream, then confirms the
// slot up to the last fully published transaction; at-least-once (a crash between the two sends
// the same event ids again). Blocking calls: used only from a detached actor, tests and tools.
#pragma once

#include <cstdint>
#include <string>

#include "persistence/events.hpp"
#include "persistence/pg.hpp"
#include "persistence/redis.hpp"

namespace seatflow::persistence {

struct RelaySettings {
  std::string stream = "seatflow:events";
  std::size_t stream_maxlen = 1'000'000;  // XADD MAXLEN ~ bound of the stream
  // Slot changes read per poll (whole transactions: a poll may read more, never splits one).
  std::size_t batch = 500;
  std::string slot = std::string(events::kDefaultSlot);  // SEATFLOW_EVENT_SLOT
  // An idle slot (no event to publish) whose unconfirmed WAL passed this many bytes gets a
  // heartbeat transaction, whose commit the next poll confirms.
  std::int64_t idle_confirm_bytes_max = 16 * 1024 * 1024;
};

enum class RelayStatus : std::uint8_t {
  published,          // `published` events went out and the slot was confirmed past them
  idle,               // nothing to publish
  busy,               // another relay holds the relay lock or reads the slot
  pg_unavailable,     // nothing known; try again later
  redis_unavailable,  // events wait in the WAL
  slot_missing,       // the slot does not exist (`seatflow migrate` creates it)
  slot_lost,          // the slot was invalidated (max_slot_wal_keep_size): events were dropped
};

struct RelayResult {
  RelayStatus status = RelayStatus::pg_unavailable;
  std::size_t published = 0;
  // Age of the oldest unconfirmed event message when the batch was read (0 when none); < 0 =
  // unknown.
  double lag_seconds = -1;
  // WAL bytes between the server's current position and the slot's confirmed one; < 0 = unknown.
  std::int64_t lag_bytes = -1;
  bool more = false;  // the poll read a full batch: more may be waiting
};

class EventRelay {
 public:
  EventRelay(PgSession& pg, RedisClient& redis, RelaySettings settings, Failpoints* failpoints);

  // Publishes at most one batch. One relay reads the slot at a time across every engine (a
  // transaction-scoped advisory lock), and the slot gives transactions in commit order, so a
  // payment's events reach the stream in the order its moves committed. Never throws.
  [[nodiscard]] RelayResult relay_once();

 private:
  RelayResult run_batch();

  PgSession& pg_;
  RedisClient& redis_;
  RelaySettings settings_;
  Failpoints* failpoints_;
};

enum class SlotCheck : std::uint8_t {
  ready,        // the slot exists and is usable
  created,      // the slot was missing and has been created now
  not_logical,  // wal_level is not `logical`: no slot can exist
  lost,         // the slot exists but was invalidated (wal_status = 'lost'); left as it is
  foreign,      // a slot of that name belongs to another database of the server
};

// Creates the publication the slot is read through and then the event slot `slot` (pgoutput)
// when they are missing, never the slot when it exists: an invalidated slot is reported, not
// replaced (its events are gone; an operator decides). Runs before the migrations, so events that
// a migration emits are in the slot.
// `wal_level` receives the server's setting. Throws on a database error.
[[nodiscard]] SlotCheck ensure_event_slot(pqxx::connection& conn, const std::string& slot,
                                          std::string* wal_level);

}  // namespace seatflow::persistence

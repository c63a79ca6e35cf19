// The outbox relay: streams the event messages that the moves wrote into the WAL from a logical
// replication slot (pgoutput over the streaming replication protocol, in commit order: one
// decoding context for the connection's life, each WAL record decoded once), XADDs them to a Redis
// Stream, then confirms the slot (standby status update) up to the last fully published
// transaction; at-least-once (a crash between the two sends the same event ids again). Blocking
// calls, each bounded: used only from a detached actor, tests and tools.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include <libpq-fe.h>

#include "persistence/drivers/pg.hpp"
#include "persistence/drivers/pq_command.hpp"
#include "persistence/drivers/redis.hpp"
#include "persistence/stores/events.hpp"

namespace seatflow::persistence {

struct RelaySettings {
  std::string stream = "seatflow:events";
  std::size_t stream_maxlen = 1'000'000;  // XADD MAXLEN ~ bound of the stream
  // Events read and held per poll (whole transactions: a poll may hold more, never splits one);
  // also the bound of what waits in memory while Redis is down (no more is read until it went
  // out: the server's send buffer and then the WAL hold the rest).
  std::size_t batch = 500;
  std::string slot = std::string(events::kDefaultSlot);  // SEATFLOW_EVENT_SLOT
  // How long one poll waits on the replication socket for the first message (the relay actor is
  // back in its mailbox after at most this long).
  std::uint32_t read_wait_ms = 50;
  // wal_sender_timeout of the stream's session (the server's default is 60 s): a stream whose
  // engine died or was cut off without the server seeing the connection close holds the slot this
  // long at most, so no other engine's relay waits longer for it. Status updates go out at least
  // every third of it (and at most every 5 s).
  std::uint32_t sender_timeout_ms = 15'000;
  // SEATFLOW_REDIS_REPLICAS_ACK: the slot is confirmed past published events only once `WAIT`
  // reports them on this many replicas (0: no WAIT), so a Redis failover loses none of them.
  std::uint32_t replicas_ack = 0;
  // How long one WAIT blocks for them (below the Redis client's socket timeout, which
  // app/config.cpp checks); a short count leaves the slot where it was until a later poll.
  std::uint32_t replicas_wait_ms = 1'000;
};

enum class RelayStatus : std::uint8_t {
  published,          // `published` events went out and the slot was confirmed past them
  idle,               // nothing to publish
  busy,               // another relay holds the relay lock or reads the slot
  pg_unavailable,     // nothing known; try again later
  redis_unavailable,  // events wait in the WAL
  slot_missing,       // the slot does not exist and cannot be made (wal_level, another database's)
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
  // More may be waiting: the poll read a full batch, or the stream has not caught up yet.
  bool more = false;
  // The slot was missing and this poll made it anew (what was unpublished in the old one is lost).
  bool slot_created = false;
  // This poll ended the walsender of the relay's own previous stream, which still held the slot.
  std::size_t streams_taken_back = 0;
};

class EventRelay {
 public:
  EventRelay(PgSession& pg, RedisClient& redis, RelaySettings settings, Failpoints* failpoints);

  ~EventRelay();
  EventRelay(const EventRelay&) = delete;
  EventRelay& operator=(const EventRelay&) = delete;

  // Publishes at most one batch: (re)connects the replication stream when needed, reads what
  // arrived (waiting up to read_wait_ms for the first message), XADDs the whole transactions in
  // one pipeline and confirms the last one. One relay reads the slot at a time across every
  // engine (the slot is active for one walsender), and the slot gives transactions in commit
  // order, so a payment's events reach the stream in the order its moves committed. Never throws.
  [[nodiscard]] RelayResult relay_once();

  // Confirms what went out, ends the stream and closes the replication connection (the slot is
  // free for another reader once this returns); events read but not published are dropped from
  // memory and come again from the slot. The next relay_once reconnects.
  void disconnect();

 private:
  struct Txn {
    std::uint64_t end_lsn = 0;
    std::vector<events::StreamFields> events;
  };
  using Clock = std::chrono::steady_clock;

  RelayResult run_poll();
  // The poll's first steps; each false means `result` is final (its status says why).
  // Re-reads the slot's state (lag, missing, lost) every kSlotCheckPeriod and on each reconnect.
  bool refresh_slot(RelayResult& result);
  // Opens the replication stream when none is open (backing off when it cannot).
  bool ensure_stream(RelayResult& result);
  // The next reconnect no sooner than `ms` from now.
  void back_off(std::uint32_t ms);
  [[nodiscard]] std::uint32_t doubled_backoff_ms() const;
  // Age of the oldest held event (0 when none, or when its time cannot be read).
  [[nodiscard]] double held_lag_seconds() const;
  RelayStatus check_slot(RelayResult& result);
  // A missing slot is made again at once (ensure_event_slot), as an engine start or `seatflow
  // migrate` would: moves are refused while it is missing (migrations 11 and 12), so availability
  // after a failover needs no operator step. An invalidated slot is never replaced.
  RelayStatus make_missing_slot(RelayResult& result);
  // Opens the replication stream under a name of its own (application_name) with the session's
  // wal_sender_timeout set to settings_.sender_timeout_ms.
  RelayStatus start_stream();
  // When the slot is busy and its holder is this relay's previous stream (the server never saw it
  // close), ends that walsender; true when it did, and the reconnect comes soon.
  bool end_own_old_stream(RelayResult& result);
  // How a read ended: the stream broke (the connection is dropped); it stopped on an empty
  // socket (or its deadline); or it stopped at a bound (settings_.batch, kMessagesPerPollMax),
  // so more may be waiting.
  enum class ReadEnd : std::uint8_t { broken, settled, capped };
  // Reads the messages that arrived, waiting up to `wait` for the first.
  ReadEnd read_stream(std::chrono::milliseconds wait);
  // One CopyData message of the stream; false on a malformed one.
  bool on_message(const char* data, std::size_t size);
  // XADDs the held transactions and confirms the published ones; false when Redis failed or the
  // replicas did not report them (replicas_ack).
  bool publish(RelayResult& result);
  // XADDs held_ from transaction `sent_before` on (the ones before went out on this connection
  // already); how many held transactions, from the first, are now wholly on the server.
  std::size_t xadd_held(std::size_t sent_before);
  // WAIT for settings_.replicas_ack replicas; on a short count remembers the `covered`
  // transactions as sent on this connection and says false.
  bool replicated(std::size_t covered);
  bool send_feedback(bool reply_requested);
  // send_feedback(false); when it fails, logs it and drops the stream (the next poll reconnects).
  bool send_feedback_or_drop();
  void drop_stream();
  [[nodiscard]] std::size_t held_events() const;

  PgSession& pg_;
  RedisClient& redis_;
  RelaySettings settings_;
  Failpoints* failpoints_;
  PqConn stream_;
  std::deque<Txn> held_;  // whole transactions read and not yet published
  // The first held transactions XADDed on connection unreplicated_generation_ whose WAIT fell
  // short: while that connection lasts they are not sent again, only waited for.
  std::size_t unreplicated_txns_ = 0;
  std::uint64_t unreplicated_generation_ = 0;
  Txn open_;  // the transaction being read (its commit not yet seen)
  bool in_txn_ = false;
  bool caught_up_ = false;          // a keepalive reached catch_up_lsn_
  std::uint64_t catch_up_lsn_ = 0;  // the server's WAL position when the stream started
  std::uint64_t confirmed_ = 0;     // end LSN of the last transaction fully XADDed (flush reported)
  std::uint64_t received_ = 0;      // the furthest WAL position the stream gave
  bool reply_due_ = false;          // the server asked for a status update
  Clock::time_point feedback_at_{};  // when the last status update went out
  Clock::time_point slot_checked_at_{};
  Clock::time_point connect_after_{};  // reconnect backoff
  std::uint32_t backoff_ms_ = 0;
  std::uint64_t relay_id_;  // random: names this relay's streams apart from other engines'
  std::uint64_t streams_started_ = 0;
  std::string stream_name_;      // application_name of the open stream
  std::string old_stream_name_;  // that of the last one dropped, until a reconnect looked for it
  RelayStatus slot_status_ = RelayStatus::pg_unavailable;
  std::int64_t lag_bytes_ = -1;
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

// Records `slot` as the slot that carries this database's events (table event_slot, migration
// 11), which seatflow_emit_events checks before every event it emits. Runs after the migrations;
// false when the schema is older than migration 11 (nothing recorded). Throws on a database error.
bool bind_event_slot(pqxx::connection& conn, const std::string& slot);

}  // namespace seatflow::persistence

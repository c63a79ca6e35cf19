// The relay over the streaming replication protocol: START_REPLICATION on a replication=database
// connection, XLogData and keepalives read without blocking (poll on the socket, bounded), the
// held transactions XADDed in one pipeline, then a standby status update whose flush position is
// the end LSN of the last published transaction.
#include "persistence/event_relay.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <utility>

#include "persistence/log.hpp"

namespace seatflow::persistence {
namespace {

// duplicate_object: another engine created the slot or the publication first.
constexpr const char* kSqlStateDuplicateObject = "42710";
// unique_violation: the same race for the publication, caught by pg_publication's unique index.
constexpr const char* kSqlStateUniqueViolation = "23505";
// object_in_use: another walsender (a relay of another engine) or a session peeking the slot.
constexpr const char* kSqlStateObjectInUse = "55006";

constexpr const char* kSlotState =
    "SELECT COALESCE(wal_status, 'lost'), "
    "  GREATEST(COALESCE((pg_current_wal_lsn() - confirmed_flush_lsn)::bigint, 0), 0) "
    "FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database()";
constexpr const char* kWalLevel = "SELECT current_setting('wal_level')";
constexpr const char* kSlotStatus =
    "SELECT COALESCE(wal_status, 'lost'), database IS NOT DISTINCT FROM current_database() "
    "FROM pg_replication_slots WHERE slot_name = $1";
// Ends the walsender of this relay's previous stream when it still holds the slot: the server
// never saw that connection close (a partition, a reset it did not receive). Only a session whose
// application_name is that stream's own name is ended, never another engine's relay.
constexpr const char* kEndOwnOldStream =
    "SELECT a.pid, pg_terminate_backend(a.pid) FROM pg_replication_slots s "
    "JOIN pg_stat_activity a ON a.pid = s.active_pid "
    "WHERE s.slot_name = $1 AND a.application_name = $2";
constexpr const char* kPublicationExists = "SELECT 1 FROM pg_publication WHERE pubname = $1";
constexpr const char* kCreateSlot = "SELECT pg_create_logical_replication_slot($1, 'pgoutput')";
constexpr const char* kBindSlot =
    "INSERT INTO event_slot (slot_name) VALUES ($1) ON CONFLICT (only_row) DO UPDATE "
    "SET slot_name = EXCLUDED.slot_name WHERE event_slot.slot_name <> EXCLUDED.slot_name";

// The slot's state (wal_status, lag in bytes) is read on the normal session at most this often,
// and at every (re)connect.
constexpr auto kSlotCheckPeriod = std::chrono::seconds(1);
// A standby status update goes out at least this often, idle or not (and at least every third of
// the session's wal_sender_timeout, which ends a stream that says nothing for that long).
constexpr auto kFeedbackPeriod = std::chrono::milliseconds(5'000);
// Reconnect backoff after a failed connect or a broken stream: doubles from the first to the max.
constexpr std::uint32_t kReconnectBackoffMsFirst = 100;
constexpr std::uint32_t kReconnectBackoffMsMax = 5'000;
// Retry period while another relay streams the slot.
constexpr std::uint32_t kBusyRetryMs = 500;
// How long one poll waits at most while the stream has not caught up (after a connect) or is
// inside a transaction, in steps of kCatchUpStepMs.
constexpr std::int64_t kCatchUpWaitMs = 2'000;
constexpr std::int64_t kCatchUpStepMs = 20;
// Messages handled per poll at most, so one poll stays short under a backlog.
constexpr std::size_t kMessagesPerPollMax = 100'000;
// Microseconds between the Unix epoch and PostgreSQL's (2000-01-01).
constexpr std::int64_t kPgEpochOffsetUs = 946'684'800LL * 1'000'000;

std::uint64_t read_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v = (v << 8) | static_cast<unsigned char>(p[i]);
  }
  return v;
}

void write_u64(char* p, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<char>(v & 0xFF);
    v >>= 8;
  }
}

std::int64_t pg_now_us() {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return us - kPgEpochOffsetUs;
}

// Seconds since `occurred_at` ("YYYY-MM-DDTHH:MM:SS.ffffffZ", UTC); nullopt when unreadable.
std::optional<double> age_seconds(const std::string& occurred_at) {
  std::tm tm{};
  int micros = 0;
  if (std::sscanf(occurred_at.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &micros) != 7) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const auto at = static_cast<double>(timegm(&tm)) + micros / 1e6;
  const auto now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return std::max(0.0, now - at);
}

std::vector<std::string> xadd_command(const RelaySettings& settings,
                                      const events::StreamFields& fields) {
  std::vector<std::string> cmd = {
      "XADD", settings.stream, "MAXLEN", "~", std::to_string(settings.stream_maxlen), "*"};
  for (const auto& [name, value] : fields) {
    cmd.push_back(name);
    cmd.push_back(value);
  }
  return cmd;
}

std::uint64_t random_relay_id() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32U) | device();
}

}  // namespace

EventRelay::EventRelay(PgSession& pg, RedisClient& redis, RelaySettings settings,
                       Failpoints* failpoints)
    : pg_(pg),
      redis_(redis),
      settings_(std::move(settings)),
      failpoints_(failpoints),
      relay_id_(random_relay_id()) {}

EventRelay::~EventRelay() {
  disconnect();
}

std::size_t EventRelay::held_events() const {
  std::size_t n = 0;
  for (const auto& txn : held_) {
    n += txn.events.size();
  }
  return n;
}

void EventRelay::drop_stream() {
  if (stream_) {
    old_stream_name_ = stream_name_;
  }
  stream_.reset();
  held_.clear();
  open_ = {};
  in_txn_ = false;
  reply_due_ = false;
}

void EventRelay::disconnect() {
  if (!stream_) {
    return;
  }
  PGconn* conn = stream_.get();
  (void)send_feedback(false);
  // CopyDone, then wait (bounded) for the server to end the stream: it releases the slot before
  // it answers, so the slot is free once this returns.
  if (PQputCopyEnd(conn, nullptr) == 1) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(pg_.limits().call_ms_max);
    (void)PQflush(conn);
    bool done = false;
    while (!done && Clock::now() < deadline) {
      if (PQconsumeInput(conn) == 0) {
        break;
      }
      char* buf = nullptr;
      int n = 0;
      while ((n = PQgetCopyData(conn, &buf, 1)) > 0) {
        PQfreemem(buf);  // data still in flight: dropped, the slot sends it again
      }
      if (n == -2) {
        break;
      }
      if (n == -1) {
        // The copy ended: read the results until the command is complete.
        while (!PQisBusy(conn)) {
          PGresult* res = PQgetResult(conn);
          if (res == nullptr) {
            done = true;
            break;
          }
          PQclear(res);
        }
        if (done) {
          break;
        }
      }
      (void)wait_socket(PQsocket(conn), false, std::chrono::milliseconds(10));
    }
  }
  drop_stream();
}

RelayResult EventRelay::relay_once() {
  try {
    return run_poll();
  } catch (const std::exception& error) {
    pg_.reset_if_broken(error);
    logger().warn("event=event_relay_failed reason=pg_unavailable");
    return {RelayStatus::pg_unavailable, 0, -1, -1, false};
  }
}

RelayStatus EventRelay::check_slot(RelayResult& result) {
  {
    pqxx::nontransaction tx(pg_.connection());
    const auto slot = tx.exec_params(kSlotState, settings_.slot);
    slot_checked_at_ = Clock::now();
    if (!slot.empty()) {
      if (slot[0][0].as<std::string>() == "lost") {
        return RelayStatus::slot_lost;
      }
      lag_bytes_ = slot[0][1].as<std::int64_t>();
      result.lag_bytes = lag_bytes_;
      return RelayStatus::idle;
    }
  }
  return make_missing_slot(result);
}

RelayStatus EventRelay::make_missing_slot(RelayResult& result) {
  switch (ensure_event_slot(pg_.connection(), settings_.slot, nullptr)) {
    case SlotCheck::created:
      result.slot_created = true;
      logger().error(
          "event=event_slot_created slot={} message=\"the event slot was missing (a failover: "
          "PostgreSQL 15 gives the promoted server no slot; or it was dropped) and the relay made "
          "it anew: events committed before now and not yet published were lost with the old "
          "slot; moves were refused (503) while it was missing (docs/RELIABILITY.md)\"",
          settings_.slot);
      [[fallthrough]];
    case SlotCheck::ready:  // another engine made it between the two looks
      lag_bytes_ = 0;
      result.lag_bytes = lag_bytes_;
      return RelayStatus::idle;
    case SlotCheck::lost:
      return RelayStatus::slot_lost;
    case SlotCheck::not_logical:
    case SlotCheck::foreign:
      break;
  }
  return RelayStatus::slot_missing;
}

RelayStatus EventRelay::start_stream() {
  // Each stream has a name of its own, so that the next one can tell it from another engine's.
  char name[64];
  std::snprintf(name, sizeof name, "seatflow-relay-%016llx-%llu",
                static_cast<unsigned long long>(relay_id_),
                static_cast<unsigned long long>(++streams_started_));
  const char* keys[] = {"dbname", "replication", "application_name", nullptr};
  const char* values[] = {pg_.dsn().c_str(), "database", name, nullptr};
  PqConn conn(PQconnectdbParams(keys, values, 1));
  if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
    logger().warn("event=event_relay_failed reason=replication_connect error={}",
                  quoted_value(conn ? PQerrorMessage(conn.get()) : "out of memory"));
    return RelayStatus::pg_unavailable;
  }
  // Each command of the stream's start has the store's call deadline: the server may freeze after
  // it accepted the connection.
  const auto call_deadline = [this] {
    return Clock::now() + std::chrono::milliseconds(pg_.limits().call_ms_max);
  };
  const std::string set_timeout =
      "SET wal_sender_timeout = " + std::to_string(settings_.sender_timeout_ms);
  const auto set = pq_command(conn.get(), set_timeout.c_str(), call_deadline());
  if (set.result == nullptr || PQresultStatus(set.result.get()) != PGRES_COMMAND_OK) {
    logger().warn("event=event_relay_failed reason=sender_timeout timed_out={} error={}",
                  set.timed_out, quoted_value(PQerrorMessage(conn.get())));
    return RelayStatus::pg_unavailable;
  }
  // The server's WAL position now: the stream has caught up once it reached it (every commit
  // before the connect was then sent).
  const auto identify = pq_command(conn.get(), "IDENTIFY_SYSTEM", call_deadline());
  const PGresult* id = identify.result.get();
  const bool identified = id != nullptr && PQresultStatus(id) == PGRES_TUPLES_OK &&
                          PQntuples(id) == 1 && PQnfields(id) >= 3;
  const auto xlogpos =
      identified ? events::parse_lsn(PQgetvalue(id, 0, 2)) : std::optional<std::uint64_t>();
  if (!xlogpos) {
    logger().warn("event=event_relay_failed reason=identify_system timed_out={} error={}",
                  identify.timed_out, quoted_value(PQerrorMessage(conn.get())));
    return RelayStatus::pg_unavailable;
  }
  char* slot = PQescapeIdentifier(conn.get(), settings_.slot.c_str(), settings_.slot.size());
  if (slot == nullptr) {
    return RelayStatus::pg_unavailable;
  }
  // From 0/0: the server starts at the slot's confirmed_flush_lsn.
  const std::string start = "START_REPLICATION SLOT " + std::string(slot) + " LOGICAL 0/0 " +
                            "(proto_version '1', publication_names '" +
                            std::string(events::kPublication) + "', messages 'true')";
  PQfreemem(slot);
  const auto started = pq_command(conn.get(), start.c_str(), call_deadline());
  if (started.timed_out) {
    logger().warn("event=event_relay_failed reason=start_replication_timeout");
    return RelayStatus::pg_unavailable;
  }
  const PGresult* res = started.result.get();
  if (res == nullptr || PQresultStatus(res) != PGRES_COPY_BOTH) {
    const char* state = res != nullptr ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    const bool busy = state != nullptr && std::strcmp(state, kSqlStateObjectInUse) == 0;
    if (!busy) {
      logger().warn("event=event_relay_failed reason=start_replication sqlstate={} error={}",
                    quoted_value(state != nullptr ? state : ""),
                    quoted_value(PQerrorMessage(conn.get())));
    }
    return busy ? RelayStatus::busy : RelayStatus::pg_unavailable;
  }
  stream_ = std::move(conn);
  stream_name_ = name;
  caught_up_ = false;
  catch_up_lsn_ = *xlogpos;
  confirmed_ = 0;
  received_ = 0;
  feedback_at_ = Clock::now();
  return RelayStatus::idle;
}

bool EventRelay::send_feedback(bool reply_requested) {
  if (!stream_) {
    return false;
  }
  char msg[1 + 8 * 4 + 1];
  msg[0] = 'r';
  // written: what the stream gave; flushed and applied: what went out to Redis (never beyond).
  write_u64(msg + 1, std::max(received_, confirmed_));
  write_u64(msg + 9, confirmed_);
  write_u64(msg + 17, confirmed_);
  write_u64(msg + 25, static_cast<std::uint64_t>(pg_now_us()));
  msg[33] = reply_requested ? 1 : 0;
  if (PQputCopyData(stream_.get(), msg, sizeof msg) != 1 || PQflush(stream_.get()) != 0) {
    return false;
  }
  feedback_at_ = Clock::now();
  reply_due_ = false;
  return true;
}

bool EventRelay::send_feedback_or_drop() {
  if (send_feedback(false)) {
    return true;
  }
  logger().warn("event=event_relay_failed reason=feedback_failed");
  drop_stream();
  return false;
}

bool EventRelay::on_message(const char* data, std::size_t size) {
  if (size < 1) {
    return false;
  }
  if (data[0] == 'k') {  // primary keepalive: walEnd, sendTime, replyRequested
    if (size < 18) {
      return false;
    }
    const auto wal_end = read_u64(data + 1);
    caught_up_ = caught_up_ || wal_end >= catch_up_lsn_;
    received_ = std::max(received_, wal_end);
    // Nothing held and no transaction open: everything up to the server's position was read
    // and every event of it went out, so the slot may be confirmed there (an idle slot holds no
    // WAL).
    if (held_.empty() && !in_txn_ && wal_end > confirmed_) {
      confirmed_ = wal_end;
      reply_due_ = true;
    }
    if (data[17] != 0) {
      reply_due_ = true;
    }
    return true;
  }
  if (data[0] != 'w' || size < 25) {  // XLogData: dataStart, walEnd, sendTime, pgoutput
    return false;
  }
  received_ = std::max(received_, read_u64(data + 9));
  const auto change = events::parse_pgoutput(std::string_view(data + 25, size - 25));
  if (!change) {
    logger().error("event=event_relay_failed reason=undecodable_slot_row bytes={}", size - 25);
    return false;
  }
  using Kind = events::WalChange::Kind;
  if (change->kind == Kind::begin) {
    open_ = {};
    in_txn_ = true;
  } else if (change->kind == Kind::commit) {
    open_.end_lsn = change->lsn;
    held_.push_back(std::move(open_));
    open_ = {};
    in_txn_ = false;
  } else if (change->kind == Kind::message && change->transactional &&
             change->prefix == events::kMessagePrefix) {
    auto events = events::message_events(change->content);
    if (!events) {
      logger().error("event=event_relay_failed reason=undecodable_event bytes={}",
                     change->content.size());
      return false;
    }
    for (auto& fields : *events) {
      open_.events.push_back(std::move(fields));
    }
  }
  return true;
}

EventRelay::ReadEnd EventRelay::read_stream(std::chrono::milliseconds wait) {
  PGconn* conn = stream_.get();
  bool waited = false;
  // Whether libpq has read what the socket held since the last message was taken: PQgetCopyData
  // (async) only looks at libpq's buffer, so "nothing" from it says nothing of the socket.
  bool consumed = false;
  const auto stream_broken = [&] {
    logger().warn("event=event_relay_failed reason=stream_broken error={}",
                  quoted_value(PQerrorMessage(conn)));
    drop_stream();
    return ReadEnd::broken;
  };
  // Until the first keepalive after the connect (the walsender sends one once it caught up with
  // the WAL) and inside a transaction, the poll waits longer, bounded: an empty read then does
  // not mean that nothing is waiting.
  const auto deadline = Clock::now() + std::max(wait, std::chrono::milliseconds(kCatchUpWaitMs));
  for (std::size_t handled = 0; handled < kMessagesPerPollMax;) {
    // Whole transactions up to the batch: the rest waits on the server.
    if (!in_txn_ && held_events() >= settings_.batch) {
      return ReadEnd::capped;
    }
    char* buf = nullptr;
    const int n = PQgetCopyData(conn, &buf, 1);
    if (n > 0) {
      const bool ok = on_message(buf, static_cast<std::size_t>(n));
      PQfreemem(buf);
      if (!ok) {
        drop_stream();
        return ReadEnd::broken;
      }
      ++handled;
      consumed = false;
      // A status update the server asked for goes out at once, also while the poll is catching
      // up: a catch-up may take longer than half the session's sender timeout.
      if (reply_due_ && !send_feedback_or_drop()) {
        return ReadEnd::broken;
      }
      continue;
    }
    if (n == 0) {
      if (!consumed) {  // what already arrived, without waiting: the poll ends only once it is in
        consumed = true;
        if (PQconsumeInput(conn) == 0) {
          return stream_broken();
        }
        continue;
      }
      const auto now = Clock::now();
      const bool settled = caught_up_ && !in_txn_;
      if ((waited && settled) || now >= deadline || (settled && !held_.empty())) {
        return ReadEnd::settled;
      }
      waited = true;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
      const auto step = settled ? wait : std::min(left, std::chrono::milliseconds(kCatchUpStepMs));
      if (!wait_socket(PQsocket(conn), false, step) || PQconsumeInput(conn) == 0) {
        return stream_broken();
      }
      continue;
    }
    // -1: the server ended the stream (shutdown, terminate); -2: an error.
    logger().warn("event=event_relay_failed reason=stream_ended error={}",
                  quoted_value(PQerrorMessage(conn)));
    drop_stream();
    return ReadEnd::broken;
  }
  return ReadEnd::capped;
}

bool EventRelay::publish(RelayResult& result) {
  std::vector<std::vector<std::string>> commands;
  for (const auto& txn : held_) {
    for (const auto& event : txn.events) {
      commands.push_back(xadd_command(settings_, event));
    }
  }
  std::size_t added = 0;
  if (!commands.empty()) {
    const auto call =
        redis_.watch_call(Clock::now() + std::chrono::milliseconds(pg_.limits().call_ms_max));
    const auto replies = redis_.pipeline(commands);
    while (added < replies.size() && replies[added].ok) {
      ++added;
    }
  }
  // Only whole transactions whose events all went out are confirmed, so the confirmed point is
  // always a commit boundary; a partly sent transaction goes out again (same event ids).
  std::size_t published = 0;
  std::size_t covered = 0;
  std::uint64_t confirm_lsn = confirmed_;
  for (const auto& txn : held_) {
    if (published + txn.events.size() > added) {
      break;
    }
    published += txn.events.size();
    confirm_lsn = txn.end_lsn;
    ++covered;
  }
  if (covered == 0) {
    logger().warn("event=event_relay_failed reason=redis_unavailable pending_batch={}",
                  commands.size());
    return false;
  }
  if (failpoints_ != nullptr && failpoints_->hit(FailpointId::relay_mark)) {
    // Stands in for a crash between the XADD and the confirm: nothing is confirmed, and what
    // was read comes again from the slot.
    logger().warn("event=event_relay_failed reason=failpoint_relay_mark");
    drop_stream();
    return false;
  }
  held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(covered));
  confirmed_ = std::max(confirmed_, confirm_lsn);
  result.published = published;
  result.more = !held_.empty();
  return true;
}

void EventRelay::back_off(std::uint32_t ms) {
  backoff_ms_ = ms;
  connect_after_ = Clock::now() + std::chrono::milliseconds(backoff_ms_);
}

std::uint32_t EventRelay::doubled_backoff_ms() const {
  return std::min(kReconnectBackoffMsMax,
                  backoff_ms_ == 0 ? kReconnectBackoffMsFirst : backoff_ms_ * 2);
}

bool EventRelay::refresh_slot(RelayResult& result) {
  if (stream_ && Clock::now() - slot_checked_at_ < kSlotCheckPeriod) {
    result.lag_bytes = lag_bytes_;
    return true;
  }
  try {
    const auto call = pg_.watch_call();
    slot_status_ = check_slot(result);
  } catch (const std::exception& error) {
    pg_.reset_if_broken(error);
    logger().warn("event=event_relay_failed reason=slot_state_unavailable");
    slot_status_ = RelayStatus::pg_unavailable;
  }
  if (slot_status_ == RelayStatus::slot_missing || slot_status_ == RelayStatus::slot_lost) {
    disconnect();
    result.status = slot_status_;
    return false;
  }
  if (slot_status_ == RelayStatus::pg_unavailable && !stream_) {
    back_off(doubled_backoff_ms());
    result.status = RelayStatus::pg_unavailable;
    return false;
  }
  return true;
}

bool EventRelay::ensure_stream(RelayResult& result) {
  if (stream_) {
    return true;
  }
  const auto started = start_stream();
  if (started == RelayStatus::idle) {
    backoff_ms_ = 0;
    slot_status_ = RelayStatus::idle;
    return true;
  }
  if (started != RelayStatus::busy) {
    back_off(doubled_backoff_ms());
  } else if (end_own_old_stream(result)) {
    back_off(kReconnectBackoffMsFirst);  // the slot is free once the old walsender has exited
  } else {
    back_off(kBusyRetryMs);
  }
  slot_status_ = started;
  result.status = started;
  return false;
}

bool EventRelay::end_own_old_stream(RelayResult& result) {
  if (old_stream_name_.empty()) {
    return false;
  }
  const std::string name = std::exchange(old_stream_name_, {});
  try {
    const auto call = pg_.watch_call();
    pqxx::nontransaction tx(pg_.connection());
    const auto ended = tx.exec_params(kEndOwnOldStream, settings_.slot, name);
    if (ended.empty() || !ended[0][1].as<bool>()) {
      return false;  // the slot's holder is another relay: wait for it like for any other
    }
    logger().warn("event=event_stream_taken_back slot={} pid={} stream={}", settings_.slot,
                  ended[0][0].as<std::int64_t>(), name);
    result.streams_taken_back = 1;
    return true;
  } catch (const std::exception& error) {
    pg_.reset_if_broken(error);
    logger().warn("event=event_relay_failed reason=take_back_failed error={}",
                  quoted_value(error.what()));
    return false;
  }
}

double EventRelay::held_lag_seconds() const {
  for (const auto& txn : held_) {
    for (const auto& event : txn.events) {
      for (const auto& [name, value] : event) {
        if (name == "occurred_at") {
          const auto age = age_seconds(value).value_or(0);
          if (age != 0) {
            return age;
          }
        }
      }
    }
  }
  return 0;
}

RelayResult EventRelay::run_poll() {
  RelayResult result;
  if (!stream_ && Clock::now() < connect_after_) {  // backing off: no query, no connect
    result.status =
        slot_status_ == RelayStatus::busy ? RelayStatus::busy : RelayStatus::pg_unavailable;
    return result;
  }
  if (!refresh_slot(result) || !ensure_stream(result)) {
    return result;
  }
  // With events held (Redis was down), the poll does not wait for more.
  const auto wait = held_.empty() ? std::chrono::milliseconds(settings_.read_wait_ms)
                                  : std::chrono::milliseconds(0);
  const auto read = read_stream(wait);
  if (read == ReadEnd::broken) {
    back_off(kReconnectBackoffMsFirst);
    result.status = RelayStatus::pg_unavailable;
    return result;
  }
  result.lag_seconds = held_lag_seconds();
  result.status = RelayStatus::idle;
  if (!held_.empty()) {
    const auto before = confirmed_;
    if (!publish(result)) {
      result.status = RelayStatus::redis_unavailable;
      if (!stream_) {
        return result;
      }
    } else {
      result.status = result.published > 0 ? RelayStatus::published : RelayStatus::idle;
    }
    if (confirmed_ != before) {
      reply_due_ = true;
    }
  }
  if (stream_ && (!caught_up_ || in_txn_ || read == ReadEnd::capped)) {
    result.more = true;
  }
  const auto feedback_period =
      std::min(kFeedbackPeriod, std::chrono::milliseconds(settings_.sender_timeout_ms / 3));
  if (reply_due_ || Clock::now() - feedback_at_ >= feedback_period) {
    if (!send_feedback_or_drop()) {
      result.status = RelayStatus::pg_unavailable;
    }
  }
  return result;
}

SlotCheck ensure_event_slot(pqxx::connection& conn, const std::string& slot,
                            std::string* wal_level) {
  pqxx::nontransaction tx(conn);
  const auto level = tx.exec1(kWalLevel)[0].as<std::string>();
  if (wal_level != nullptr) {
    *wal_level = level;
  }
  if (level != "logical") {
    return SlotCheck::not_logical;
  }
  // The publication first: pgoutput reads it as of each decoded change, so a slot whose WAL
  // starts before the publication existed could never be read.
  if (tx.exec_params(kPublicationExists, std::string(events::kPublication)).empty()) {
    try {
      tx.exec("CREATE PUBLICATION " + std::string(events::kPublication));
    } catch (const pqxx::sql_error& error) {
      if (error.sqlstate() != kSqlStateDuplicateObject &&
          error.sqlstate() != kSqlStateUniqueViolation) {
        throw;
      }
    }
  }
  const auto status = tx.exec_params(kSlotStatus, slot);
  if (!status.empty()) {
    if (!status[0][1].as<bool>()) {
      return SlotCheck::foreign;
    }
    return status[0][0].as<std::string>() == "lost" ? SlotCheck::lost : SlotCheck::ready;
  }
  try {
    tx.exec_params(kCreateSlot, slot);
  } catch (const pqxx::sql_error& error) {
    // Another engine created it between the look-up and here.
    if (error.sqlstate() == kSqlStateDuplicateObject) {
      return SlotCheck::ready;
    }
    throw;
  }
  return SlotCheck::created;
}

bool bind_event_slot(pqxx::connection& conn, const std::string& slot) {
  pqxx::nontransaction tx(conn);
  if (tx.exec1("SELECT to_regclass('event_slot') IS NOT NULL")[0].as<bool>()) {
    tx.exec_params(kBindSlot, slot);
    return true;
  }
  return false;
}

}  // namespace seatflow::persistence

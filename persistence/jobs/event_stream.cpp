// The event relay's side of the streaming replication protocol: START_REPLICATION on the
// replication connection, XLogData and keepalives read without blocking (poll on the socket,
// bounded), and the standby status updates whose flush position confirms what was published.

#include "persistence/jobs/event_relay.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "persistence/drivers/log.hpp"

namespace seatflow::persistence {
namespace {

// object_in_use: another walsender (a relay of another engine) or a session peeking the slot.
constexpr const char* kSqlStateObjectInUse = "55006";
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

// Whether a replication command failed because its deadline passed (the server froze).
bool timed_out(const Result<PqResult>& command) {
  return command.error() == errc::deadline_exceeded;
}

// START_REPLICATION of `slot` with the events' publication, from 0/0: the server starts at the
// slot's confirmed_flush_lsn. nullopt when libpq cannot escape the name (out of memory).
std::optional<std::string> start_replication_command(PGconn* conn, const std::string& slot) {
  char* quoted = PQescapeIdentifier(conn, slot.c_str(), slot.size());
  if (quoted == nullptr) {
    return std::nullopt;
  }
  std::string command = "START_REPLICATION SLOT " + std::string(quoted) +
                        " LOGICAL 0/0 (proto_version '1', publication_names '" +
                        std::string(events::kPublication) + "', messages 'true')";
  PQfreemem(quoted);
  return command;
}

}  // namespace

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
  if (!set.ok() || PQresultStatus(set.value().get()) != PGRES_COMMAND_OK) {
    logger().warn("event=event_relay_failed reason=sender_timeout timed_out={} error={}",
                  timed_out(set), quoted_value(PQerrorMessage(conn.get())));
    return RelayStatus::pg_unavailable;
  }
  // The server's WAL position now: the stream has caught up once it reached it (every commit
  // before the connect was then sent).
  const auto identify = pq_command(conn.get(), "IDENTIFY_SYSTEM", call_deadline());
  const PGresult* id = identify.ok() ? identify.value().get() : nullptr;
  const bool identified = id != nullptr && PQresultStatus(id) == PGRES_TUPLES_OK &&
                          PQntuples(id) == 1 && PQnfields(id) >= 3;
  const auto xlogpos =
      identified ? events::parse_lsn(PQgetvalue(id, 0, 2)) : std::optional<std::uint64_t>();
  if (!xlogpos) {
    logger().warn("event=event_relay_failed reason=identify_system timed_out={} error={}",
                  timed_out(identify), quoted_value(PQerrorMessage(conn.get())));
    return RelayStatus::pg_unavailable;
  }
  const auto start = start_replication_command(conn.get(), settings_.slot);
  if (!start) {
    return RelayStatus::pg_unavailable;
  }
  const auto started = pq_command(conn.get(), start->c_str(), call_deadline());
  if (timed_out(started)) {
    logger().warn("event=event_relay_failed reason=start_replication_timeout");
    return RelayStatus::pg_unavailable;
  }
  const PGresult* res = started.ok() ? started.value().get() : nullptr;
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

}  // namespace seatflow::persistence

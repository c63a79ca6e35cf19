// The relay over the streaming replication protocol: each poll reads the stream (event_stream.cpp),
// XADDs the held transactions in one pipeline, then sends a standby status update whose flush
// position is the end LSN of the last published transaction; the slot itself is event_slot.cpp's.
#include "persistence/jobs/event_relay.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <utility>

#include "persistence/drivers/log.hpp"

namespace seatflow::persistence {
namespace {

// A standby status update goes out at least this often, idle or not (and at least every third of
// the session's wal_sender_timeout, which ends a stream that says nothing for that long).
constexpr auto kFeedbackPeriod = std::chrono::milliseconds(5'000);
// Reconnect backoff after a failed connect or a broken stream: doubles from the first to the max.
constexpr std::uint32_t kReconnectBackoffMsFirst = 100;
constexpr std::uint32_t kReconnectBackoffMsMax = 5'000;
// Retry period while another relay streams the slot.
constexpr std::uint32_t kBusyRetryMs = 500;

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
  unreplicated_txns_ = 0;
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

std::size_t EventRelay::xadd_held(std::size_t sent_before) {
  std::vector<std::vector<std::string>> commands;
  for (std::size_t i = sent_before; i < held_.size(); ++i) {
    for (const auto& event : held_[i].events) {
      commands.push_back(xadd_command(settings_, event));
    }
  }
  const auto generation = redis_.connection_generation();
  std::size_t added = 0;
  if (!commands.empty()) {
    const auto replies = redis_.pipeline(commands);
    while (added < replies.size() && replies[added].ok) {
      ++added;
    }
  }
  // What went out before counts only when it went to the server this pipeline reached.
  if (sent_before > 0 && redis_.connection_generation() != generation) {
    return 0;
  }
  // Only whole transactions whose events all went out are confirmed, so the confirmed point is
  // always a commit boundary; a partly sent transaction goes out again (same event ids).
  std::size_t covered = sent_before;
  for (std::size_t i = sent_before, events = 0; i < held_.size(); ++i) {
    if (events + held_[i].events.size() > added) {
      break;
    }
    events += held_[i].events.size();
    ++covered;
  }
  return covered;
}

bool EventRelay::replicated(std::size_t covered) {
  if (settings_.replicas_ack == 0) {
    return true;
  }
  const auto generation = redis_.connection_generation();
  const auto reply = redis_.command(
      {"WAIT", std::to_string(settings_.replicas_ack), std::to_string(settings_.replicas_wait_ms)});
  if (reply.ok && reply.integer >= static_cast<long long>(settings_.replicas_ack) &&
      redis_.connection_generation() == generation) {
    return true;
  }
  // Not confirmed: the slot keeps the events. While this connection lasts only the WAIT is asked
  // again; a new connection (a failover) sends them again.
  if (reply.ok) {
    unreplicated_txns_ = covered;
    unreplicated_generation_ = generation;
  }
  logger().warn(
      "event=event_relay_failed reason=replicas_behind replicas_ack={} acked={} pending_txns={} "
      "error={}",
      settings_.replicas_ack, reply.ok ? reply.integer : -1, covered, quoted_value(reply.error));
  return false;
}

bool EventRelay::publish(RelayResult& result) {
  const std::size_t sent_before =
      redis_.connection_generation() == unreplicated_generation_ ? unreplicated_txns_ : 0;
  unreplicated_txns_ = 0;
  const auto call =
      redis_.watch_call(Clock::now() + std::chrono::milliseconds(pg_.limits().call_ms_max));
  const std::size_t covered = xadd_held(sent_before);
  if (covered == 0) {
    logger().warn("event=event_relay_failed reason=redis_unavailable pending_batch={}",
                  held_events());
    return false;
  }
  if (!replicated(covered)) {
    return false;
  }
  if (failpoints_ != nullptr && failpoints_->hit(FailpointId::relay_mark)) {
    // Stands in for a crash between the XADD and the confirm: nothing is confirmed, and what
    // was read comes again from the slot.
    logger().warn("event=event_relay_failed reason=failpoint_relay_mark");
    drop_stream();
    return false;
  }
  std::size_t published = 0;
  for (std::size_t i = 0; i < covered; ++i) {
    published += held_[i].events.size();
  }
  confirmed_ = std::max(confirmed_, held_[covered - 1].end_lsn);
  held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(covered));
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

}  // namespace seatflow::persistence

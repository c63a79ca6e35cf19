// One relay batch: lock, peek the slot's messages in commit order, XADD them in one pipeline,
// confirm the slot up to the last transaction whose events all went out.
#include "persistence/event_relay.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

#include <spdlog/spdlog.h>

namespace seatflow::persistence {
namespace {

// An arbitrary constant that names SeatFlow's relay lock (the migration lock is 0x5EA7F10).
constexpr long long kRelayLockKey = 0x5EA7F11;
// PostgreSQL's object_in_use: another session (a tool peeking the slot) holds the slot.
constexpr const char* kSqlStateObjectInUse = "55006";
// duplicate_object: another engine created the slot or the publication first.
constexpr const char* kSqlStateDuplicateObject = "42710";

constexpr const char* kTryRelayLock = "SELECT pg_try_advisory_xact_lock($1)";
constexpr const char* kSlotState =
    "SELECT COALESCE(wal_status, 'lost'), "
    "  GREATEST(COALESCE((pg_current_wal_lsn() - confirmed_flush_lsn)::bigint, 0), 0) "
    "FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database()";
constexpr const char* kPeek =
    "SELECT data FROM pg_logical_slot_peek_binary_changes($1, NULL, $2, "
    "  'proto_version', '1', 'publication_names', $3, 'messages', 'true')";
constexpr const char* kAdvance = "SELECT pg_replication_slot_advance($1, $2::pg_lsn)";
constexpr const char* kHeartbeat = "SELECT pg_logical_emit_message(true, $1::text, ''::text)";
constexpr const char* kWalLevel = "SELECT current_setting('wal_level')";
constexpr const char* kSlotStatus =
    "SELECT COALESCE(wal_status, 'lost'), database IS NOT DISTINCT FROM current_database() "
    "FROM pg_replication_slots WHERE slot_name = $1";
constexpr const char* kPublicationExists = "SELECT 1 FROM pg_publication WHERE pubname = $1";
constexpr const char* kCreateSlot = "SELECT pg_create_logical_replication_slot($1, 'pgoutput')";

// One committed transaction of the slot: its events' stream fields and its end (commit) LSN.
struct SlotTransaction {
  std::uint64_t end_lsn = 0;
  std::vector<events::StreamFields> events;
};

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

// The committed transactions of the peeked rows, in commit order; nullopt on a row that is not
// pgoutput (logged).
std::optional<std::vector<SlotTransaction>> transactions_of(const pqxx::result& rows) {
  std::vector<SlotTransaction> out;
  SlotTransaction current;
  for (const auto& row : rows) {
    const pqxx::binarystring bytes(row[0]);
    const auto change = events::parse_pgoutput(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    if (!change) {
      spdlog::error("event=event_relay_failed reason=undecodable_slot_row bytes={}", bytes.size());
      return std::nullopt;
    }
    if (change->kind == events::WalChange::Kind::commit) {
      current.end_lsn = change->lsn;
      out.push_back(std::move(current));
      current = {};
    } else if (change->kind == events::WalChange::Kind::message && change->transactional &&
               change->prefix == events::kMessagePrefix) {
      auto fields = events::stream_fields(change->content);
      if (!fields) {
        spdlog::error("event=event_relay_failed reason=undecodable_event bytes={}",
                      change->content.size());
        return std::nullopt;
      }
      current.events.push_back(std::move(*fields));
    }
  }
  return out;
}

std::optional<double> oldest_age(const std::vector<SlotTransaction>& txns) {
  for (const auto& txn : txns) {
    for (const auto& event : txn.events) {
      for (const auto& [name, value] : event) {
        if (name == "occurred_at") {
          return age_seconds(value);
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

EventRelay::EventRelay(PgSession& pg, RedisClient& redis, RelaySettings settings,
                       Failpoints* failpoints)
    : pg_(pg), redis_(redis), settings_(std::move(settings)), failpoints_(failpoints) {}

RelayResult EventRelay::relay_once() {
  try {
    return run_batch();
  } catch (const pqxx::sql_error& error) {
    if (error.sqlstate() == kSqlStateObjectInUse) {
      return {RelayStatus::busy, 0, -1, -1, false};
    }
    spdlog::warn("event=event_relay_failed reason=pg_error sqlstate={}", error.sqlstate());
    return {RelayStatus::pg_unavailable, 0, -1, -1, false};
  } catch (const std::exception& error) {
    if (!pg_.connected() || dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr) {
      pg_.reset();
    }
    spdlog::warn("event=event_relay_failed reason=pg_unavailable");
    return {RelayStatus::pg_unavailable, 0, -1, -1, false};
  }
}

RelayResult EventRelay::run_batch() {
  pqxx::work tx(pg_.connection());
  RelayResult result;
  // A poll that publishes nothing commits too: it wrote nothing, and rollbacks are what
  // monitoring watches.
  if (!tx.exec_params1(kTryRelayLock, kRelayLockKey)[0].as<bool>()) {
    tx.commit();
    result.status = RelayStatus::busy;
    return result;
  }
  const auto slot = tx.exec_params(kSlotState, settings_.slot);
  if (slot.empty() || slot[0][0].as<std::string>() == "lost") {
    tx.commit();
    result.status = slot.empty() ? RelayStatus::slot_missing : RelayStatus::slot_lost;
    return result;
  }
  result.lag_bytes = slot[0][1].as<std::int64_t>();
  const auto rows =
      tx.exec_params(kPeek, settings_.slot, settings_.batch, std::string(events::kPublication));
  result.more = rows.size() >= settings_.batch;
  const auto txns = transactions_of(rows);
  if (!txns) {
    result.status = RelayStatus::pg_unavailable;
    return result;  // nothing confirmed: the rows stay in the slot
  }
  result.lag_seconds = oldest_age(*txns).value_or(0);
  if (txns->empty()) {
    if (result.lag_bytes >= settings_.idle_confirm_bytes_max) {
      tx.exec_params(kHeartbeat, std::string(events::kHeartbeatPrefix));
    }
    tx.commit();
    result.status = RelayStatus::idle;
    return result;
  }
  std::vector<std::vector<std::string>> commands;
  for (const auto& txn : *txns) {
    for (const auto& event : txn.events) {
      commands.push_back(xadd_command(settings_, event));
    }
  }
  std::size_t added = 0;
  if (!commands.empty()) {
    const auto replies = redis_.pipeline(commands);
    while (added < replies.size() && replies[added].ok) {
      ++added;
    }
  }
  // Only whole transactions whose events all went out are confirmed, so the confirmed point is
  // always a commit boundary; a partly sent transaction goes out again (same event ids).
  std::size_t covered = 0;
  std::size_t published = 0;
  std::uint64_t confirm_lsn = 0;
  for (const auto& txn : *txns) {
    if (published + txn.events.size() > added) {
      break;
    }
    published += txn.events.size();
    confirm_lsn = txn.end_lsn;
    ++covered;
  }
  if (covered == 0) {
    spdlog::warn("event=event_relay_failed reason=redis_unavailable pending_batch={}",
                 commands.size());
    result.status = RelayStatus::redis_unavailable;
    return result;  // nothing confirmed: the events wait in the WAL
  }
  if (failpoints_ != nullptr && failpoints_->hit(FailpointId::relay_mark)) {
    spdlog::warn("event=event_relay_failed reason=failpoint_relay_mark");
    result.status = RelayStatus::redis_unavailable;
    return result;
  }
  tx.exec_params(kAdvance, settings_.slot, events::format_lsn(confirm_lsn));
  tx.commit();
  result.status = published > 0 ? RelayStatus::published : RelayStatus::idle;
  result.published = published;
  result.more = result.more || covered < txns->size();
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
      if (error.sqlstate() != kSqlStateDuplicateObject) {
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

}  // namespace seatflow::persistence

// The event relay's logical replication slot: made when it is missing, bound in event_slot, its
// state and lag read on the normal session, and a previous stream of this relay that still holds
// it ended.

#include "persistence/jobs/event_relay.hpp"

#include <chrono>

#include "persistence/drivers/log.hpp"

namespace seatflow::persistence {
namespace {

// duplicate_object: another engine created the slot or the publication first.
constexpr const char* kSqlStateDuplicateObject = "42710";
// unique_violation: the same race for the publication, caught by pg_publication's unique index.
constexpr const char* kSqlStateUniqueViolation = "23505";
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
}  // namespace

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

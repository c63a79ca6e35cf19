// One relay batch: lock, read unpublished events in seq order, XADD them in one pipeline, mark.
#include "persistence/event_relay.hpp"

#include "persistence/log.hpp"

namespace seatflow::persistence {
namespace {

// An arbitrary constant that names SeatFlow's relay lock (the migration lock is 0x5EA7F10).
constexpr long long kRelayLockKey = 0x5EA7F11;

constexpr const char* kOldestUnpublishedAge =
    "SELECT COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - ("
    "  SELECT occurred_at FROM payment_event WHERE published_at IS NULL ORDER BY seq LIMIT 1)), 0)"
    "::float8";
constexpr const char* kTryRelayLock = "SELECT pg_try_advisory_xact_lock($1)";
constexpr const char* kUnpublished =
    "SELECT seq, event_id, type, payment_no, order_no, amount_cents, detail, "
    "  to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') "
    "FROM payment_event WHERE published_at IS NULL ORDER BY seq LIMIT $1";
constexpr const char* kMarkPublished =
    "UPDATE payment_event SET published_at = now() WHERE seq = ANY($1::bigint[])";

// XADD <stream> MAXLEN ~ <n> * event_id … type … [payment_no …] [order_no …] …; absent values
// are left out rather than sent empty.
std::vector<std::string> xadd_command(const RelaySettings& settings, const pqxx::row& row) {
  std::vector<std::string> cmd = {
      "XADD", settings.stream, "MAXLEN", "~", std::to_string(settings.stream_maxlen), "*"};
  static constexpr const char* kFields[] = {"event_id",     "type",   "payment_no", "order_no",
                                            "amount_cents", "detail", "occurred_at"};
  for (std::size_t i = 0; i < std::size(kFields); ++i) {
    const auto& field = row[static_cast<int>(i) + 1];
    if (!field.is_null()) {
      cmd.emplace_back(kFields[i]);
      cmd.push_back(field.as<std::string>());
    }
  }
  return cmd;
}

}  // namespace

EventRelay::EventRelay(PgSession& pg, RedisClient& redis, RelaySettings settings,
                       Failpoints* failpoints)
    : pg_(pg), redis_(redis), settings_(std::move(settings)), failpoints_(failpoints) {}

RelayResult EventRelay::relay_once() {
  try {
    return run_batch();
  } catch (const std::exception& error) {
    if (!pg_.connected() || dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr) {
      pg_.reset();
    }
    logger().warn("event=event_relay_failed reason=pg_unavailable");
    return {RelayStatus::pg_unavailable, 0, -1};
  }
}

RelayResult EventRelay::run_batch() {
  pqxx::work tx(pg_.connection());
  RelayResult result;
  result.lag_seconds = tx.exec1(kOldestUnpublishedAge)[0].as<double>();
  // A poll that publishes nothing commits too: it wrote nothing, and rollbacks are what
  // monitoring watches.
  if (!tx.exec_params1(kTryRelayLock, kRelayLockKey)[0].as<bool>()) {
    tx.commit();
    result.status = RelayStatus::busy;
    return result;
  }
  const auto rows = tx.exec_params(kUnpublished, settings_.batch);
  if (rows.empty()) {
    tx.commit();
    result.status = RelayStatus::idle;
    return result;
  }
  std::vector<std::vector<std::string>> commands;
  std::vector<std::int64_t> seqs;
  commands.reserve(rows.size());
  seqs.reserve(rows.size());
  for (const auto& row : rows) {
    seqs.push_back(row[0].as<std::int64_t>());
    commands.push_back(xadd_command(settings_, row));
  }
  const auto replies = redis_.pipeline(commands);
  std::size_t added = 0;
  while (added < replies.size() && replies[added].ok) {
    ++added;
  }
  if (added == 0) {
    logger().warn("event=event_relay_failed reason=redis_unavailable pending_batch={}",
                  rows.size());
    result.status = RelayStatus::redis_unavailable;
    return result;  // rolled back: the events wait in PostgreSQL
  }
  // Only the leading run of successful XADDs is marked, so a gap never lets a later event of a
  // payment be marked while an earlier one is not; the rest go out (again) in the next batch.
  seqs.resize(added);
  if (failpoints_ != nullptr && failpoints_->hit(FailpointId::relay_mark)) {
    logger().warn("event=event_relay_failed reason=failpoint_relay_mark");
    result.status = RelayStatus::redis_unavailable;
    return result;
  }
  tx.exec_params0(kMarkPublished, to_pg_array(seqs));
  tx.commit();
  result.status = RelayStatus::published;
  result.published = added;
  return result;
}

}  // namespace seatflow::persistence

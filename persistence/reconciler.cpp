// Reconciler: keyset scan of orders per phase, HMGET comparison, share-locked CAS repairs.
#include "persistence/reconciler.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "persistence/seat_scripts.hpp"
#include "persistence/sql.hpp"

namespace seatflow::persistence {

const std::string_view kForceSoldLua = R"lua(
local locked = '1:' .. ARGV[1]
local sold = '2:' .. ARGV[1]
local out = {1, 0}
for i = 2, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v == false or v == locked then
    redis.call('HSET', KEYS[1], ARGV[i], sold)
    out[2] = out[2] + 1
  elseif v ~= sold then
    out[#out + 1] = ARGV[i]
    out[#out + 1] = v
  end
end
return out
)lua";

const std::string_view kReleaseFinishedLua = R"lua(
local locked = '1:' .. ARGV[1]
local sold = '2:' .. ARGV[1]
local n = 0
for i = 2, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v == locked or v == sold then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return {1, n}
)lua";

const std::string_view kRelockLua = R"lua(
local locked = '1:' .. ARGV[1]
local sold = '2:' .. ARGV[1]
local out = {1, 0}
for i = 2, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v == false then
    redis.call('HSET', KEYS[1], ARGV[i], locked)
    out[2] = out[2] + 1
  elseif v ~= locked and v ~= sold then
    out[#out + 1] = ARGV[i]
    out[#out + 1] = v
  end
end
return out
)lua";

namespace {

constexpr const char* kScanOrders =
    "SELECT order_no, show_id, to_json(seat_ids)::text FROM order_info "
    "WHERE status = ANY($1::smallint[]) AND order_no > $2 AND starts_with(order_no, $3) "
    "ORDER BY order_no LIMIT $4";
// Payment row before order row, as everywhere else; FOR SHARE blocks a close, refund, sweep or
// callback of this order until the repair is committed, and waits for one in progress.
constexpr const char* kSharePayment =
    "SELECT payment_no FROM payment_order WHERE order_no = $1 FOR SHARE";
constexpr const char* kShareOrder =
    "SELECT status, show_id, to_json(seat_ids)::text FROM order_info WHERE order_no = $1 "
    "FOR SHARE";

const char* phase_statuses(ReconcilePhase phase) {
  switch (phase) {
    case ReconcilePhase::paid:
      return "{1}";
    case ReconcilePhase::finished:
      return "{2,3}";
    case ReconcilePhase::pending:
    case ReconcilePhase::done:
      break;
  }
  return "{0}";
}

std::vector<std::string> parse_seats(const pqxx::field& field) {
  return nlohmann::json::parse(field.as<std::string>()).get<std::vector<std::string>>();
}

// Thrown inside a repair transaction so it rolls back; the message is log-safe.
struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace

void ReconcileStats::add(const ReconcileStats& other) {
  orders_scanned += other.orders_scanned;
  orders_repaired += other.orders_repaired;
  seats_sold += other.seats_sold;
  seats_released += other.seats_released;
  seats_relocked += other.seats_relocked;
  seat_conflicts += other.seat_conflicts;
  pending_conflicts += other.pending_conflicts;
  errors += other.errors;
  if (!other.last_error.empty()) {
    last_error = other.last_error;
  }
}

Reconciler::Reconciler(PgSession& pg, RedisClient& redis, ReconcileOptions options,
                       ReconcileCounters* counters)
    : pg_(pg),
      redis_(redis),
      options_(std::move(options)),
      counters_(counters),
      force_sold_sha_(script_sha1(kForceSoldLua)),
      release_finished_sha_(script_sha1(kReleaseFinishedLua)),
      relock_sha_(script_sha1(kRelockLua)) {
  options_.batch = std::max<std::size_t>(1, options_.batch);
}

ReconcileStats Reconciler::step(ReconcileCursor& cursor) {
  ReconcileStats stats;
  if (cursor.phase == ReconcilePhase::done) {
    cursor = {};
  }
  try {
    std::vector<OrderRow> rows;
    {
      pqxx::read_transaction tx(pg_.connection());
      const auto result = tx.exec_params(kScanOrders, phase_statuses(cursor.phase), cursor.after,
                                         options_.scope_prefix, options_.batch);
      rows.reserve(result.size());
      for (const auto& row : result) {
        rows.push_back({row[0].as<std::string>(), row[1].as<std::string>(), parse_seats(row[2])});
      }
    }
    scan_batch(cursor.phase, rows, stats);
    if (rows.size() < options_.batch) {
      cursor.phase = static_cast<ReconcilePhase>(static_cast<int>(cursor.phase) + 1);
      cursor.after.clear();
    } else {
      cursor.after = rows.back().order_no;
    }
  } catch (const std::exception& error) {
    if (!pg_.connected() || dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr) {
      pg_.reset();
    }
    ++stats.errors;
    stats.last_error = dynamic_cast<const StoreError*>(&error) != nullptr
                           ? error.what()
                           : (classify(error) == PgErrorClass::retryable ? "postgresql unavailable"
                                                                         : "postgresql error");
    spdlog::warn("event=reconcile_batch_failed reason=\"{}\"", stats.last_error);
  }
  publish(stats);
  if (cursor.phase == ReconcilePhase::done && counters_ != nullptr) {
    counters_->passes.fetch_add(1, std::memory_order_relaxed);
  }
  return stats;
}

ReconcileStats Reconciler::run_pass() {
  ReconcileCursor cursor;
  ReconcileStats total;
  while (cursor.phase != ReconcilePhase::done) {
    const auto stats = step(cursor);
    total.add(stats);
    if (stats.errors > 0) {
      break;
    }
  }
  return total;
}

void Reconciler::scan_batch(ReconcilePhase phase, const std::vector<OrderRow>& rows,
                            ReconcileStats& stats) {
  stats.orders_scanned += rows.size();
  if (rows.empty()) {
    return;
  }
  std::vector<std::vector<std::string>> cmds;
  cmds.reserve(rows.size());
  for (const auto& row : rows) {
    std::vector<std::string> cmd = {"HMGET", seat_key(row.show_id)};
    cmd.insert(cmd.end(), row.seats.begin(), row.seats.end());
    cmds.push_back(std::move(cmd));
  }
  const auto replies = redis_.pipeline(cmds);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& reply = replies[i];
    if (!reply.ok) {
      throw StoreError("redis unavailable");
    }
    const auto locked = "1:" + rows[i].order_no;
    const auto sold = "2:" + rows[i].order_no;
    bool needs = false;
    for (const auto& value : reply.elements) {
      switch (phase) {
        case ReconcilePhase::paid:
          needs = needs || value.is_nil || value.str != sold;
          break;
        case ReconcilePhase::finished:
          needs = needs || (!value.is_nil && (value.str == locked || value.str == sold));
          break;
        case ReconcilePhase::pending:
        case ReconcilePhase::done:
          needs = needs || value.is_nil;
          break;
      }
    }
    if (needs) {
      repair(rows[i], stats);
    }
  }
}

void Reconciler::repair(const OrderRow& row, ReconcileStats& stats) {
  pqxx::work tx(pg_.connection());
  const auto payment = tx.exec_params(kSharePayment, row.order_no);
  const auto order = tx.exec_params(kShareOrder, row.order_no);
  if (order.empty()) {
    return;
  }
  // The status as of now, under the locks; the scan's snapshot may be stale.
  const int status = order[0][0].as<int>();
  const auto show_id = order[0][1].as<std::string>();
  const auto seats = parse_seats(order[0][2]);
  std::vector<std::string> args;
  args.reserve(seats.size() + 1);
  args.push_back(row.order_no);
  args.insert(args.end(), seats.begin(), seats.end());
  const auto run = [&](std::string_view script, const std::string& sha) {
    auto reply = redis_.eval_script(script, sha, {seat_key(show_id)}, args);
    if (!reply.ok || reply.elements.size() < 2) {
      throw StoreError("redis unavailable");
    }
    return reply;
  };
  std::uint64_t changed = 0;
  if (status == 1) {
    const auto reply = run(kForceSoldLua, force_sold_sha_);
    changed = static_cast<std::uint64_t>(reply.elements[1].integer);
    stats.seats_sold += changed;
    if (reply.elements.size() > 2 && !payment.empty()) {
      nlohmann::json held = nlohmann::json::array();
      for (std::size_t k = 2; k + 1 < reply.elements.size(); k += 2) {
        held.push_back({{"seat_id", reply.elements[k].str}, {"holder", reply.elements[k + 1].str}});
      }
      const nlohmann::json detail = {
          {"show_id", show_id}, {"seats", held}, {"source", "reconciler"}};
      const auto payment_no = payment[0][0].as<std::string>();
      const auto inserted =
          tx.exec_prepared(std::string(sql::kInsertDiscrepancy), payment_no, row.order_no,
                           std::string("seat_conflict"), detail.dump());
      // The statement returns the row it inserted (and writes its outbox event); none when an
      // open seat_conflict row already exists.
      if (inserted.size() == 1) {
        ++stats.seat_conflicts;
        spdlog::warn("event=seat_conflict payment_no={} order_no={} seats_held_by_others={}",
                     payment_no, row.order_no, held.size());
      }
    }
  } else if (status == 2 || status == 3) {
    const auto reply = run(kReleaseFinishedLua, release_finished_sha_);
    changed = static_cast<std::uint64_t>(reply.elements[1].integer);
    stats.seats_released += changed;
  } else {
    const auto reply = run(kRelockLua, relock_sha_);
    changed = static_cast<std::uint64_t>(reply.elements[1].integer);
    stats.seats_relocked += changed;
    if (reply.elements.size() > 2) {
      ++stats.pending_conflicts;
      spdlog::warn("event=pending_seat_conflict order_no={} seats_held_by_others={}", row.order_no,
                   (reply.elements.size() - 2) / 2);
    }
  }
  tx.commit();
  if (changed > 0) {
    ++stats.orders_repaired;
    spdlog::info("event=reconcile_repair order_no={} status={} seats_changed={}", row.order_no,
                 status, changed);
  }
}

void Reconciler::publish(const ReconcileStats& stats) {
  if (counters_ == nullptr) {
    return;
  }
  counters_->seats_sold.fetch_add(stats.seats_sold, std::memory_order_relaxed);
  counters_->seats_released.fetch_add(stats.seats_released, std::memory_order_relaxed);
  counters_->seats_relocked.fetch_add(stats.seats_relocked, std::memory_order_relaxed);
  counters_->seat_conflicts.fetch_add(stats.seat_conflicts, std::memory_order_relaxed);
  counters_->errors.fetch_add(stats.errors, std::memory_order_relaxed);
}

}  // namespace seatflow::persistence

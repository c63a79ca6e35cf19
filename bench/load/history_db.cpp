// Reads the end state of a history's payments from PostgreSQL and Redis for check_history.
#include <algorithm>
#include <set>

#include <chrono>
#include <thread>

#include "load/history.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/stores/events.hpp"
#include "persistence/stores/seat_scripts.hpp"

namespace seatflow::bench {
namespace {

// Stream entries read per XRANGE, and at most this many pages (the stream's MAXLEN bound is 10⁶
// by default: the whole of it).
constexpr std::size_t kStreamPage = 5000;
constexpr std::size_t kStreamPagesMax = 400;

// The value of `field` in an XRANGE entry's field list, "" when absent.
std::string field_of(const persistence::RedisReply& fields, std::string_view field) {
  for (std::size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
    if (fields.elements[i].str == field) {
      return fields.elements[i + 1].str;
    }
  }
  return {};
}

void read_stream(persistence::RedisClient& redis, const std::set<std::string>& payments,
                 const std::string& stream, Snapshot& snapshot) {
  std::vector<std::pair<std::string, std::string>> entries;
  std::string start = "-";
  for (std::size_t page = 0; page < kStreamPagesMax; ++page) {
    const auto replies =
        redis.pipeline({{"XRANGE", stream, start, "+", "COUNT", std::to_string(kStreamPage)}});
    if (replies.empty() || !replies.front().ok) {
      throw std::runtime_error("XRANGE " + stream + " failed: " +
                               (replies.empty() ? "no reply" : replies.front().error));
    }
    const auto& items = replies.front().elements;
    for (const auto& item : items) {
      if (item.elements.size() < 2) {
        continue;
      }
      const auto payment_no = field_of(item.elements[1], "payment_no");
      if (payments.count(payment_no) != 0) {
        entries.emplace_back(field_of(item.elements[1], "event_id"), payment_no);
      }
    }
    if (items.size() < kStreamPage) {
      snapshot.stream = std::move(entries);
      return;
    }
    start = "(" + items.back().elements.front().str;
  }
  throw std::runtime_error("stream " + stream + " is longer than the checker reads");
}

// The witness slot (bench/chaos.sh creates it after `seatflow migrate`, nothing confirms it).
constexpr const char* kWitnessSlot = "seatflow_chaos_witness";

struct SlotEvent {
  std::string event_id;
  std::string payment_no;
  std::uint64_t end_lsn = 0;  // the end LSN of the event's transaction
};

// The committed event messages that `slot` has not confirmed, in commit order.
std::vector<SlotEvent> peek_slot(pqxx::connection& conn, const std::string& slot) {
  pqxx::nontransaction tx(conn);
  const auto rows = tx.exec_params(
      "SELECT data FROM pg_logical_slot_peek_binary_changes($1, NULL, NULL, "
      "  'proto_version', '1', 'publication_names', $2, 'messages', 'true')",
      slot, std::string(persistence::events::kPublication));
  std::vector<SlotEvent> out;
  std::size_t txn_first = 0;  // the first event of the open transaction in `out`
  for (const auto& row : rows) {
    const pqxx::binarystring bytes(row[0]);
    const auto change = persistence::events::parse_pgoutput(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    if (!change) {
      throw std::runtime_error("slot " + slot + " gave a row that is not pgoutput");
    }
    if (change->kind == persistence::events::WalChange::Kind::commit) {
      for (auto i = txn_first; i < out.size(); ++i) {
        out[i].end_lsn = change->lsn;
      }
      txn_first = out.size();
      continue;
    }
    if (change->kind != persistence::events::WalChange::Kind::message ||
        change->prefix != persistence::events::kMessagePrefix) {
      continue;
    }
    const auto events = persistence::events::message_events(change->content);
    if (!events) {
      throw std::runtime_error("slot " + slot + " holds an event that is not an event");
    }
    for (const auto& fields : *events) {
      SlotEvent event;
      for (const auto& [name, value] : fields) {
        if (name == "event_id") {
          event.event_id = value;
        } else if (name == "payment_no") {
          event.payment_no = value;
        }
      }
      out.push_back(std::move(event));
    }
  }
  return out;
}

// Every committed event of the history's payments in commit order (the witness slot), each marked
// published when the engine's slot has confirmed its transaction (the relay streams that slot, so
// it cannot be peeked; it confirms whole transactions in commit order, so an event is published
// exactly when its transaction's end LSN is at or before the slot's confirmed_flush_lsn).
void read_events(pqxx::connection& conn, const std::set<std::string>& payments,
                 Snapshot& snapshot) {
  std::uint64_t confirmed = 0;
  {
    pqxx::nontransaction tx(conn);
    const auto rows = tx.exec_params(
        "SELECT COALESCE(confirmed_flush_lsn::text, '0/0') FROM pg_replication_slots "
        "WHERE slot_name = $1",
        std::string(persistence::events::kDefaultSlot));
    if (!rows.empty()) {
      confirmed = persistence::events::parse_lsn(rows[0][0].as<std::string>()).value_or(0);
    }
  }
  std::int64_t seq = 0;
  for (const auto& event : peek_slot(conn, kWitnessSlot)) {
    ++seq;
    if (payments.count(event.payment_no) == 0) {
      continue;
    }
    // The events of a move are emitted once; a repeat in the witness would be a second move.
    snapshot.events.push_back({seq, event.event_id,
                               event.event_id.substr(0, event.event_id.find(':')), event.payment_no,
                               event.end_lsn != 0 && event.end_lsn <= confirmed});
  }
}

}  // namespace

Snapshot load_snapshot(pqxx::connection& conn, persistence::RedisClient& redis,
                       const History& history, const std::string& stream) {
  Snapshot snapshot;
  std::vector<std::string> payments;
  std::set<std::string> payment_set;
  std::set<std::string> show_set;
  for (const auto& p : history.payments) {
    payments.push_back(p.payment_no);
    payment_set.insert(p.payment_no);
    show_set.insert(p.show_id);
  }
  const std::vector<std::string> shows(show_set.begin(), show_set.end());
  const auto payment_array = persistence::to_pg_array(payments);
  const auto show_array = persistence::to_pg_array(shows);
  {
    pqxx::read_transaction tx(conn);
    for (const auto& row : tx.exec_params(
             "SELECT p.payment_no, p.status, o.status FROM payment_order p "
             "JOIN order_info o ON o.order_no = p.order_no WHERE p.payment_no = ANY($1::text[])",
             payment_array)) {
      snapshot.payments[row[0].as<std::string>()] = {row[1].as<int>(), row[2].as<int>()};
    }
    for (const auto& row :
         tx.exec_params("SELECT callback_id, payment_no, status, payload_sha256, duplicate_count "
                        "FROM payment_callback_log WHERE payment_no = ANY($1::text[])",
                        payment_array)) {
      snapshot.log[row[0].as<std::string>()] = {row[1].as<std::string>(), row[2].as<int>(),
                                                row[3].as<std::string>(),
                                                row[4].as<std::int64_t>()};
    }
    for (const auto& row :
         tx.exec_params("SELECT payment_no, kind FROM payment_discrepancy "
                        "WHERE payment_no = ANY($1::text[]) AND resolved_at IS NULL",
                        payment_array)) {
      snapshot.discrepancies[row[0].as<std::string>()].push_back(row[1].as<std::string>());
    }
    for (const auto& row :
         tx.exec_params("SELECT o.show_id || '/' || s.seat_id, o.order_no FROM order_info o "
                        "CROSS JOIN LATERAL unnest(o.seat_ids) AS s (seat_id) "
                        "WHERE o.show_id = ANY($1::text[]) AND o.status IN (0, 1)",
                        show_array)) {
      snapshot.live_orders_of_seat[row[0].as<std::string>()].push_back(row[1].as<std::string>());
    }
    for (const auto& row :
         tx.exec_params("SELECT show_id || '/' || seat_id, order_no FROM seat_claim "
                        "WHERE show_id = ANY($1::text[])",
                        show_array)) {
      snapshot.claim_of_seat[row[0].as<std::string>()] = row[1].as<std::string>();
    }
  }
  read_events(conn, payment_set, snapshot);
  for (const auto& show : shows) {
    const auto replies = redis.pipeline({{"HGETALL", persistence::seat_key(show)}});
    if (replies.empty() || !replies.front().ok) {
      throw std::runtime_error("HGETALL of show " + show + " failed");
    }
    const auto& elements = replies.front().elements;
    for (std::size_t e = 0; e + 1 < elements.size(); e += 2) {
      snapshot.redis_seat[show + "/" + elements[e].str] = elements[e + 1].str;
    }
  }
  if (!stream.empty()) {
    read_stream(redis, payment_set, stream, snapshot);
  }
  return snapshot;
}

}  // namespace seatflow::bench

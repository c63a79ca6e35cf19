// Seeds a run's orders, payments and seats with COPY and pipelined HSET; prefills big tables.
#include "load/seed.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "persistence/stores/seat_scripts.hpp"

namespace seatflow::bench {
namespace {

// HSET commands sent per pipeline round trip.
constexpr std::size_t kHsetPerPipeline = 64;
// Rows per COPY transaction when prefilling (bounds the FK trigger queue in PostgreSQL).
constexpr std::uint32_t kPrefillChunkRows = 500'000;
// A fixed digest for prefilled log rows; only its shape matters.
constexpr std::string_view kPrefillDigest =
    "0000000000000000000000000000000000000000000000000000000000000000";
constexpr std::string_view kPrefillPaidAt = "2024-01-01 00:00:00+00";

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string seats_array(const Ids& ids, std::uint32_t payment) {
  std::string out = "{";
  for (std::uint32_t s = 0; s < kSeatsPerOrder; ++s) {
    if (s > 0) {
      out.push_back(',');
    }
    out += ids.seat_id(payment, s);
  }
  out.push_back('}');
  return out;
}

// The seat claims of live orders (SPEC §9), loaded beside the orders as a user's bulk load would.
template <class Live>
void copy_claims(pqxx::work& tx, const Ids& ids, std::uint32_t from, std::uint32_t to,
                 Live&& live) {
  pqxx::stream_to claims(tx, "seat_claim",
                         std::vector<std::string>{"show_id", "seat_id", "order_no"});
  for (auto i = from; i < to; ++i) {
    if (!live(i)) {
      continue;
    }
    for (std::uint32_t s = 0; s < kSeatsPerOrder; ++s) {
      claims << std::make_tuple(ids.show_id(i), ids.seat_id(i, s), ids.order_no(i));
    }
  }
  claims.complete();
}

// Whether the schema has seat claims (migration 3); an older engine measured side by side migrates
// its own, older schema.
bool has_seat_claims(pqxx::work& tx) {
  return tx.exec1("SELECT to_regclass('seat_claim') IS NOT NULL")[0].as<bool>();
}

void copy_orders_and_payments(pqxx::work& tx, const Ids& ids, const Plan& plan) {
  {
    pqxx::stream_to orders(tx, "order_info",
                           std::vector<std::string>{"order_no", "user_id", "show_id", "seat_ids",
                                                    "amount_cents", "status"});
    for (std::uint32_t i = 0; i < plan.payments.size(); ++i) {
      const auto& p = plan.payments[i];
      orders << std::make_tuple(ids.order_no(i), "u" + std::to_string(i % 5000), ids.show_id(i),
                                seats_array(ids, i), p.amount_cents, p.seed_order_status);
    }
    orders.complete();
  }
  if (has_seat_claims(tx)) {
    copy_claims(tx, ids, 0, static_cast<std::uint32_t>(plan.payments.size()), [&](std::uint32_t i) {
      const auto status = plan.payments[i].seed_order_status;
      return status == 0 || status == 1;
    });
  }
  pqxx::stream_to payments(
      tx, "payment_order",
      std::vector<std::string>{"payment_no", "order_no", "channel", "amount_cents", "status"});
  for (std::uint32_t i = 0; i < plan.payments.size(); ++i) {
    const auto& p = plan.payments[i];
    payments << std::make_tuple(ids.payment_no(i), ids.order_no(i), std::string("hmac"),
                                p.amount_cents, p.seed_payment_status);
  }
  payments.complete();
}

std::uint64_t lock_seats(persistence::RedisClient& redis, const Ids& ids, const Plan& plan) {
  std::vector<std::vector<std::string>> batch;
  std::uint64_t seats = 0;
  const auto flush = [&] {
    if (batch.empty()) {
      return;
    }
    const auto replies = redis.pipeline(batch);
    for (const auto& reply : replies) {
      if (!reply.ok) {
        throw std::runtime_error("redis HSET failed: " + reply.error);
      }
    }
    if (replies.size() != batch.size()) {
      throw std::runtime_error("redis pipeline lost replies");
    }
    batch.clear();
  };
  const auto count = static_cast<std::uint32_t>(plan.payments.size());
  for (std::uint32_t first = 0; first < count; first += kOrdersPerShow) {
    std::vector<std::string> cmd = {"HSET", persistence::seat_key(ids.show_id(first))};
    const auto last = std::min(count, first + kOrdersPerShow);
    for (std::uint32_t i = first; i < last; ++i) {
      if (!plan.payments[i].seed_seats_locked) {
        continue;
      }
      for (std::uint32_t s = 0; s < kSeatsPerOrder; ++s) {
        cmd.push_back(ids.seat_id(i, s));
        cmd.push_back("1:" + ids.order_no(i));
        ++seats;
      }
    }
    if (cmd.size() > 2) {
      batch.push_back(std::move(cmd));
    }
    if (batch.size() >= kHsetPerPipeline) {
      flush();
    }
  }
  flush();
  return seats;
}

void prefill_chunk(pqxx::connection& conn, const Ids& ids, std::uint32_t from, std::uint32_t to) {
  pqxx::work tx(conn);
  {
    pqxx::stream_to orders(tx, "order_info",
                           std::vector<std::string>{"order_no", "user_id", "show_id", "seat_ids",
                                                    "amount_cents", "status"});
    for (auto i = from; i < to; ++i) {
      orders << std::make_tuple(ids.order_no(i), "u" + std::to_string(i % 5000), ids.show_id(i),
                                seats_array(ids, i), 5000, 1);
    }
    orders.complete();
  }
  if (has_seat_claims(tx)) {
    copy_claims(tx, ids, from, to, [](std::uint32_t) { return true; });
  }
  {
    pqxx::stream_to payments(tx, "payment_order",
                             std::vector<std::string>{"payment_no", "order_no", "channel",
                                                      "amount_cents", "status", "paid_at"});
    for (auto i = from; i < to; ++i) {
      payments << std::make_tuple(ids.payment_no(i), ids.order_no(i), std::string("hmac"), 5000, 1,
                                  std::string(kPrefillPaidAt));
    }
    payments.complete();
  }
  pqxx::stream_to log(tx, "payment_callback_log",
                      std::vector<std::string>{"callback_id", "channel", "payment_no", "status",
                                               "payload_sha256", "received_at"});
  for (auto i = from; i < to; ++i) {
    log << std::make_tuple(ids.callback_id(i, 0), std::string("hmac"), ids.payment_no(i), 1,
                           std::string(kPrefillDigest), std::string(kPrefillPaidAt));
  }
  log.complete();
  tx.commit();
}

}  // namespace

SeedReport seed_plan(pqxx::connection& conn, persistence::RedisClient& redis, const Ids& ids,
                     const Plan& plan) {
  const auto start = Clock::now();
  SeedReport report;
  {
    pqxx::work tx(conn);
    copy_orders_and_payments(tx, ids, plan);
    tx.commit();
  }
  report.rows = 2 * plan.payments.size();
  report.seats = lock_seats(redis, ids, plan);
  report.seconds = seconds_since(start);
  return report;
}

SeedReport prefill(pqxx::connection& conn, const std::string& prefix, std::uint32_t rows) {
  const auto start = Clock::now();
  const Ids ids(prefix);
  for (std::uint32_t from = 0; from < rows; from += kPrefillChunkRows) {
    prefill_chunk(conn, ids, from, std::min(rows, from + kPrefillChunkRows));
  }
  return {seconds_since(start), 3 * rows, 0};
}

void vacuum_analyze(pqxx::connection& conn) {
  pqxx::nontransaction tx(conn);
  tx.exec("VACUUM (ANALYZE) order_info, payment_order, payment_callback_log");
  tx.exec(
      "DO $$ BEGIN IF to_regclass('seat_claim') IS NOT NULL THEN ANALYZE seat_claim; END IF; END "
      "$$");
}

std::optional<double> await_event_slot(pqxx::connection& conn, const std::string& slot,
                                       std::chrono::seconds limit) {
  const auto start = std::chrono::steady_clock::now();
  pqxx::nontransaction tx(conn);
  const auto written = tx.exec1("SELECT pg_current_wal_lsn()::text")[0].as<std::string>();
  for (;;) {
    const auto rows = tx.exec_params(
        "SELECT confirmed_flush_lsn >= $2::pg_lsn FROM pg_replication_slots "
        "WHERE slot_name = $1 AND active AND confirmed_flush_lsn IS NOT NULL",
        slot, written);
    if (rows.empty() || rows[0][0].as<bool>()) {
      return seconds_since(start);
    }
    if (std::chrono::steady_clock::now() - start > limit) {
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace seatflow::bench

// Checks a finished run's end state: payments, orders, callback log, duplicate counts, seats,
// discrepancies.
#include "load/check.hpp"

#include <charconv>
#include <optional>
#include <unordered_map>
#include <utility>

#include "persistence/stores/seat_scripts.hpp"

namespace seatflow::bench {
namespace {

// Examples quoted per failed check.
constexpr std::size_t kMaxExamples = 5;
// Show hashes read per pipeline round trip.
constexpr std::size_t kHashesPerPipeline = 16;

// The payment index at the end of "<letter><prefix>-<index>...", or nullopt.
std::optional<std::uint32_t> index_after(std::string_view id, std::size_t head) {
  if (id.size() <= head) {
    return std::nullopt;
  }
  std::uint32_t value = 0;
  const auto* first = id.data() + head;
  const auto* last = id.data() + id.size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc{} || ptr == first) {
    return std::nullopt;
  }
  return value;
}

void check_payments(pqxx::work& tx, const Ids& ids, const Plan& plan, CheckReport& report) {
  Tally payments("payment status");
  Tally orders("order status");
  Tally paid_at("paid_at exactly on paid payments");
  const auto rows = tx.exec_params(
      "SELECT p.payment_no, p.status, p.paid_at IS NOT NULL, o.status "
      "FROM payment_order p JOIN order_info o ON o.order_no = p.order_no "
      "WHERE p.payment_no LIKE $1",
      ids.payment_like());
  const std::size_t head = 1 + ids.prefix().size() + 1;
  std::vector<bool> seen(plan.payments.size(), false);
  for (const auto& row : rows) {
    const auto payment_no = row[0].as<std::string>();
    const auto index = index_after(payment_no, head);
    if (!index || *index >= plan.payments.size() || seen[*index]) {
      payments.fail(payment_no + " is not in the plan");
      continue;
    }
    seen[*index] = true;
    const auto& expected = plan.payments[*index];
    const int status = row[1].as<int>();
    const int order_status = row[3].as<int>();
    const bool has_paid_at = row[2].as<bool>();
    if (status == expected.expect_payment_status) {
      payments.pass();
    } else {
      payments.fail(payment_no + " (" + std::string(to_string(expected.script)) + ") status " +
                    std::to_string(status) + ", expected " +
                    std::to_string(expected.expect_payment_status));
    }
    if (order_status == expected.expect_order_status) {
      orders.pass();
    } else {
      orders.fail(ids.order_no(*index) + " (" + std::string(to_string(expected.script)) +
                  ") status " + std::to_string(order_status) + ", expected " +
                  std::to_string(expected.expect_order_status));
    }
    if (has_paid_at == (status == 1)) {
      paid_at.pass();
    } else {
      paid_at.fail(payment_no + " status " + std::to_string(status) +
                   (has_paid_at ? " has paid_at" : " has no paid_at"));
    }
  }
  for (std::uint32_t i = 0; i < seen.size(); ++i) {
    if (!seen[i]) {
      payments.fail(ids.payment_no(i) + " is missing");
    }
  }
  report.items.push_back(payments.item());
  report.items.push_back(orders.item());
  report.items.push_back(paid_at.item());
}

// [Σ(ACKs − 1), Σ(requests − 1)] over callback ids: every ACK after the first of an id is one
// duplicate; a request that was not ACKed (503, timeout, reset) may or may not have been applied.
// A balancer's resends multiply the requests that may reach the engines.
std::pair<std::uint64_t, std::uint64_t> duplicate_sum_bounds(const LoadResult& load,
                                                             std::uint32_t proxy_resends) {
  std::uint64_t min_sum = 0;
  std::uint64_t max_sum = 0;
  for (std::size_t cb = 0; cb < load.acks_per_callback.size(); ++cb) {
    const auto acks = load.acks_per_callback[cb];
    const auto sends =
        static_cast<std::uint64_t>(load.sends_per_callback[cb]) * (1 + proxy_resends);
    min_sum += acks > 0 ? acks - 1 : 0;
    max_sum += sends > 0 ? sends - 1 : 0;
  }
  return {min_sum, max_sum};
}

void check_log(pqxx::work& tx, const Ids& ids, const Plan& plan, const LoadResult& load,
               bool lenient, std::uint32_t proxy_resends, CheckReport& report) {
  Tally rows_check("one log row per callback id");
  Tally dup_check(
      "duplicate_count = ACKs - 1 per callback id (up to requests - 1 after a non-ACK)");
  std::unordered_map<std::string, std::uint32_t> by_id;
  by_id.reserve(plan.callbacks.size() * 2);
  for (std::uint32_t cb = 0; cb < plan.callbacks.size(); ++cb) {
    const auto& c = plan.callbacks[cb];
    by_id.emplace(ids.callback_id(c.payment, c.sequence), cb);
  }
  const auto rows = tx.exec_params(
      "SELECT callback_id, payment_no, status, duplicate_count FROM payment_callback_log "
      "WHERE callback_id LIKE $1",
      ids.callback_like());
  std::vector<bool> seen(plan.callbacks.size(), false);
  std::uint64_t duplicate_sum = 0;
  std::uint64_t ambiguous = 0;  // callback ids with a request that was not ACKed
  for (const auto& row : rows) {
    const auto callback_id = row[0].as<std::string>();
    const auto it = by_id.find(callback_id);
    if (it == by_id.end() || seen[it->second]) {
      rows_check.fail(callback_id + " is not in the plan");
      continue;
    }
    seen[it->second] = true;
    const auto& c = plan.callbacks[it->second];
    const auto payment_no = row[1].as<std::string>();
    const int status = row[2].as<int>();
    if (payment_no != ids.payment_no(c.payment) || status != c.status) {
      rows_check.fail(callback_id + " row says " + payment_no + "/" + std::to_string(status));
    } else {
      rows_check.pass();
    }
    const auto duplicates = row[3].as<std::int64_t>();
    duplicate_sum += static_cast<std::uint64_t>(duplicates);
    const std::int64_t acks = load.acks_per_callback[it->second];
    const std::int64_t sent = load.sends_per_callback[it->second];
    const std::int64_t sends = sent * (1 + static_cast<std::int64_t>(proxy_resends));
    if (sent > acks) {
      ++ambiguous;
    }
    // Exactly (ACKs - 1) unless a request of this id was not ACKed (503, timeout, reset): the
    // engine may have applied it, so anything up to (requests sent - 1) is right.
    const std::int64_t floor = lenient ? 0 : acks - 1;
    if (acks > 0 && duplicates >= floor && duplicates <= sends - 1) {
      dup_check.pass();
    } else {
      dup_check.fail(callback_id + " duplicate_count " + std::to_string(duplicates) + " after " +
                     std::to_string(acks) + " ACKs of " + std::to_string(sends) + " requests");
    }
  }
  for (std::uint32_t cb = 0; cb < seen.size(); ++cb) {
    if (!seen[cb]) {
      const auto& c = plan.callbacks[cb];
      rows_check.fail(ids.callback_id(c.payment, c.sequence) + " has no log row");
    }
  }
  const auto [min_sum, max_sum] = duplicate_sum_bounds(load, proxy_resends);
  if ((!lenient && duplicate_sum < min_sum) || duplicate_sum > max_sum) {
    dup_check.fail("sum " + std::to_string(duplicate_sum) + " outside [sum of (ACKs - 1) " +
                   std::to_string(min_sum) + ", sum of (requests - 1) " + std::to_string(max_sum) +
                   "]");
  }
  report.items.push_back(rows_check.item());
  report.items.push_back(dup_check.item(
      "sum " + std::to_string(duplicate_sum) + ", ACKs " + std::to_string(load.acked) +
      ", distinct " + std::to_string(plan.callbacks.size()) + ", ids with a request not ACKed " +
      std::to_string(ambiguous)));
}

void check_discrepancies(pqxx::work& tx, const Ids& ids, const Plan& plan, CheckReport& report) {
  Tally tally("open discrepancies exactly as expected");
  const auto rows = tx.exec_params(
      "SELECT payment_no, kind, count(*) FROM payment_discrepancy "
      "WHERE payment_no LIKE $1 AND resolved_at IS NULL GROUP BY payment_no, kind",
      ids.payment_like());
  const std::size_t head = 1 + ids.prefix().size() + 1;
  std::vector<bool> seen(plan.payments.size(), false);
  for (const auto& row : rows) {
    const auto payment_no = row[0].as<std::string>();
    const auto kind = row[1].as<std::string>();
    const auto index = index_after(payment_no, head);
    if (!index || *index >= plan.payments.size() || !plan.payments[*index].expect_discrepancy ||
        kind != "paid_after_cancel" || row[2].as<int>() != 1) {
      tally.fail(payment_no + " has " + row[2].as<std::string>() + " open " + kind);
      continue;
    }
    seen[*index] = true;
    tally.pass();
  }
  for (std::uint32_t i = 0; i < plan.payments.size(); ++i) {
    if (plan.payments[i].expect_discrepancy && !seen[i]) {
      tally.fail(ids.payment_no(i) + " has no paid_after_cancel row");
    }
  }
  report.items.push_back(tally.item());
}

// The value a seat of payment i must hold, "" for free.
std::string expected_seat(const Ids& ids, const PaymentPlan& p, std::uint32_t i) {
  switch (p.expect_seat_state) {
    case 1:
      return "1:" + ids.order_no(i);
    case 2:
      return "2:" + ids.order_no(i);
    default:
      return {};
  }
}

void check_seats(persistence::RedisClient& redis, const Ids& ids, const Plan& plan,
                 CheckReport& report) {
  Tally tally("every seat held by the right order in the right state");
  const auto count = static_cast<std::uint32_t>(plan.payments.size());
  std::vector<std::uint32_t> firsts;
  for (std::uint32_t first = 0; first < count; first += kOrdersPerShow) {
    firsts.push_back(first);
  }
  for (std::size_t b = 0; b < firsts.size(); b += kHashesPerPipeline) {
    std::vector<std::vector<std::string>> cmds;
    const auto end = std::min(firsts.size(), b + kHashesPerPipeline);
    for (auto k = b; k < end; ++k) {
      cmds.push_back({"HGETALL", persistence::seat_key(ids.show_id(firsts[k]))});
    }
    const auto replies = redis.pipeline(cmds);
    for (auto k = b; k < end; ++k) {
      const auto idx = k - b;
      if (idx >= replies.size() || !replies[idx].ok) {
        tally.fail("HGETALL " + ids.show_id(firsts[k]) + " failed");
        continue;
      }
      std::unordered_map<std::string, std::string> fields;
      const auto& elements = replies[idx].elements;
      for (std::size_t e = 0; e + 1 < elements.size(); e += 2) {
        fields.emplace(elements[e].str, elements[e + 1].str);
      }
      const auto last = std::min(count, firsts[k] + kOrdersPerShow);
      std::size_t expected_fields = 0;
      for (auto i = firsts[k]; i < last; ++i) {
        const auto want = expected_seat(ids, plan.payments[i], i);
        for (std::uint32_t s = 0; s < kSeatsPerOrder; ++s) {
          const auto seat = ids.seat_id(i, s);
          const auto it = fields.find(seat);
          const std::string have = it == fields.end() ? "" : it->second;
          if (have == want) {
            tally.pass();
          } else {
            tally.fail(ids.show_id(i) + "/" + seat + " is '" + have + "', expected '" + want +
                       "' (" + std::string(to_string(plan.payments[i].script)) + ")");
          }
          expected_fields += want.empty() ? 0 : 1;
        }
      }
      if (fields.size() != expected_fields) {
        tally.fail(ids.show_id(firsts[k]) + " has " + std::to_string(fields.size()) +
                   " seat fields, expected " + std::to_string(expected_fields));
      }
    }
  }
  report.items.push_back(tally.item());
}

}  // namespace

Tally::Tally(std::string name) : name_(std::move(name)) {}

void Tally::fail(const std::string& example) {
  ++failed_;
  if (examples_.size() < kMaxExamples) {
    examples_.push_back(example);
  }
}

CheckItem Tally::item(const std::string& summary) const {
  CheckItem out{name_, failed_ == 0, {}};
  out.detail = std::to_string(passed_) + " ok, " + std::to_string(failed_) + " wrong";
  if (!summary.empty()) {
    out.detail += "; " + summary;
  }
  for (const auto& example : examples_) {
    out.detail += "; " + example;
  }
  return out;
}

bool CheckReport::ok() const {
  for (const auto& item : items) {
    if (!item.ok) {
      return false;
    }
  }
  return !items.empty();
}

CheckReport check_invariants(pqxx::connection& conn, persistence::RedisClient& redis,
                             const Ids& ids, const Plan& plan, const LoadResult& load,
                             bool lenient_duplicates, std::uint32_t proxy_resends) {
  CheckReport report;
  report.items.push_back(
      {"every delivery acknowledged with 200", load.unacked == 0,
       std::to_string(load.acked) + " of " + std::to_string(load.planned_requests) + " ACKed"});
  {
    pqxx::work tx(conn);
    check_payments(tx, ids, plan, report);
    check_log(tx, ids, plan, load, lenient_duplicates, proxy_resends, report);
    check_discrepancies(tx, ids, plan, report);
    tx.commit();
  }
  check_seats(redis, ids, plan, report);
  return report;
}

}  // namespace seatflow::bench

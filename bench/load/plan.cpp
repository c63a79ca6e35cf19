// Builds the load plan of a scenario: what to seed, which callbacks to send in which phase, what
// must hold after.
#include "load/plan.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <random>

namespace seatflow::bench {
namespace {

// In `mixed`, an out-of-order failure carries a timestamp this much older than the success.
constexpr std::int64_t kOutOfOrderAgeMs = 5000;

Script mixed_script(std::uint32_t payment) {
  switch (payment % 10) {
    case 0:
    case 1:
    case 2:
    case 3:
      return Script::success_only;
    case 4:
    case 5:
      return Script::failure_then_success;
    case 6:
    case 7:
      return Script::failure_only;
    case 8:
      return Script::success_then_failure;
    default:
      return Script::paid_after_cancel;
  }
}

PaymentPlan payment_for(Script script, std::uint32_t payment) {
  PaymentPlan p;
  p.script = script;
  p.amount_cents = 5000 + static_cast<std::int64_t>(payment % 100) * 100;
  switch (script) {
    case Script::success_only:
    case Script::failure_then_success:
    case Script::success_then_failure:
      break;
    case Script::failure_only:
      p.expect_payment_status = 2;
      p.expect_order_status = 0;
      p.expect_seat_state = 1;
      break;
    case Script::paid_after_cancel:
      // The sweeper cancelled the order, closed the payment and released the seats in one go.
      p.seed_payment_status = 3;
      p.seed_order_status = 2;
      p.seed_seats_locked = false;
      p.expect_payment_status = 3;
      p.expect_order_status = 2;
      p.expect_seat_state = 0;
      p.expect_discrepancy = true;
      break;
  }
  return p;
}

std::uint32_t add_callback(Plan& plan, std::uint32_t payment, int status, std::uint32_t sequence,
                           std::int64_t age_ms = 0) {
  plan.callbacks.push_back({payment, status, age_ms, sequence});
  return static_cast<std::uint32_t>(plan.callbacks.size() - 1);
}

void plan_mixed(Plan& plan, std::uint32_t payments) {
  plan.phases.assign(3, {});
  auto& first = plan.phases[0];
  auto& second = plan.phases[1];
  auto& late = plan.phases[2];
  for (std::uint32_t i = 0; i < payments; ++i) {
    const auto script = mixed_script(i);
    plan.payments.push_back(payment_for(script, i));
    switch (script) {
      case Script::success_only: {
        const auto s = add_callback(plan, i, 1, 0);
        first.push_back(s);
        if (i % 10 == 0) {
          late.push_back(s);  // the gateway re-delivers a success long after it was applied
        }
        break;
      }
      case Script::failure_then_success: {
        const auto f = add_callback(plan, i, 2, 0, kOutOfOrderAgeMs);
        first.push_back(f);
        second.push_back(add_callback(plan, i, 1, 1));
        if (i % 10 == 4) {
          late.push_back(f);  // a stale failure re-delivered after the success: nothing moves
        }
        break;
      }
      case Script::failure_only:
        first.push_back(add_callback(plan, i, 2, 0));
        break;
      case Script::success_then_failure:
        first.push_back(add_callback(plan, i, 1, 0));
        second.push_back(add_callback(plan, i, 2, 1, kOutOfOrderAgeMs));
        break;
      case Script::paid_after_cancel:
        first.push_back(add_callback(plan, i, 1, 0));
        break;
    }
  }
}

}  // namespace

std::string_view to_string(Scenario scenario) {
  switch (scenario) {
    case Scenario::unique:
      return "unique";
    case Scenario::storm:
      return "storm";
    case Scenario::mixed:
      return "mixed";
  }
  return "?";
}

std::string_view to_string(Script script) {
  switch (script) {
    case Script::success_only:
      return "success_only";
    case Script::failure_then_success:
      return "failure_then_success";
    case Script::failure_only:
      return "failure_only";
    case Script::success_then_failure:
      return "success_then_failure";
    case Script::paid_after_cancel:
      return "paid_after_cancel";
  }
  return "?";
}

std::string Ids::make(char kind, std::uint32_t payment) const {
  // Appended piece by piece: GCC 12 reports a false -Wrestrict on `"x" + std::string`.
  std::string out(1, kind);
  out += prefix_;
  out += '-';
  out += std::to_string(payment);
  return out;
}

std::string Ids::payment_no(std::uint32_t payment) const {
  return make('P', payment);
}

std::string Ids::order_no(std::uint32_t payment) const {
  return make('O', payment);
}

std::string Ids::show_id(std::uint32_t payment) const {
  return make('S', payment / kOrdersPerShow);
}

std::string Ids::seat_id(std::uint32_t payment, std::uint32_t seat) const {
  std::string out(1, 'R');
  out += std::to_string(payment % kOrdersPerShow);
  out += 'S';
  out += std::to_string(seat);
  return out;
}

std::string Ids::callback_id(std::uint32_t payment, std::uint32_t sequence) const {
  std::string out = make('C', payment);
  out += '-';
  out += std::to_string(sequence);
  return out;
}

std::uint64_t Plan::total_requests() const {
  std::uint64_t total = 0;
  for (const auto& phase : phases) {
    total += phase.size();
  }
  return total;
}

std::uint32_t Plan::shows() const {
  const auto n = static_cast<std::uint32_t>(payments.size());
  return (n + kOrdersPerShow - 1) / kOrdersPerShow;
}

Plan make_plan(const PlanOptions& options) {
  assert(options.payments > 0);
  Plan plan;
  plan.scenario = options.scenario;
  plan.payments.reserve(options.payments);
  switch (options.scenario) {
    case Scenario::unique:
    case Scenario::storm: {
      const std::uint32_t copies = options.scenario == Scenario::storm ? options.duplicates : 1;
      assert(copies > 0);
      plan.phases.assign(1, {});
      plan.phases[0].reserve(static_cast<std::size_t>(options.payments) * copies);
      for (std::uint32_t i = 0; i < options.payments; ++i) {
        plan.payments.push_back(payment_for(Script::success_only, i));
        const auto cb = add_callback(plan, i, 1, 0);
        plan.phases[0].insert(plan.phases[0].end(), copies, cb);
      }
      break;
    }
    case Scenario::mixed:
      plan_mixed(plan, options.payments);
      break;
  }
  std::mt19937_64 rng(options.shuffle_seed);
  for (auto& phase : plan.phases) {
    std::shuffle(phase.begin(), phase.end(), rng);
  }
  return plan;
}

std::string make_run_prefix() {
  const auto now =
      static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  std::random_device device;
  std::uint64_t value = now ^ (static_cast<std::uint64_t>(device()) << 20);
  constexpr std::string_view kDigits = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string out;
  for (int i = 0; i < 8; ++i) {
    out.push_back(kDigits[value % kDigits.size()]);
    value /= kDigits.size();
  }
  return out;
}

}  // namespace seatflow::bench

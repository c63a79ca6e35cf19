// The load plan of one seatflow-bench run: payments to seed, callbacks to send, phases, expected
// end state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace seatflow::bench {

enum class Scenario { unique, storm, mixed };

[[nodiscard]] std::string_view to_string(Scenario scenario);

// Seats each order holds; every order's seats are distinct fields of its show's hash.
inline constexpr std::uint32_t kSeatsPerOrder = 2;
// Orders that share one show (one Redis hash).
inline constexpr std::uint32_t kOrdersPerShow = 1000;

// What the `mixed` scenario does to one payment (SPEC §4/§6 paths).
enum class Script : std::uint8_t {
  success_only,          // S                   → paid
  failure_then_success,  // F | S               → paid via 2→1
  failure_only,          // F                   → failed, seats stay locked
  success_then_failure,  // S | F (late, older) → paid, the failure is ignored
  paid_after_cancel,     // cancelled+closed at seed time | S → discrepancy, nothing moves
};

[[nodiscard]] std::string_view to_string(Script script);

// Seed state and the exact expected end state of one payment.
struct PaymentPlan {
  Script script = Script::success_only;
  std::int64_t amount_cents = 0;
  int seed_payment_status = 0;
  int seed_order_status = 0;
  bool seed_seats_locked = true;  // seats `1:<order>` at seed time (else free)
  int expect_payment_status = 1;
  int expect_order_status = 1;
  int expect_seat_state = 2;  // 0 free (no field), 1 locked by the order, 2 sold to the order
  bool expect_discrepancy = false;
};

// One distinct callback id (a delivery may send it several times).
struct CallbackPlan {
  std::uint32_t payment = 0;
  int status = 1;              // 1 success, 2 failure
  std::int64_t age_ms = 0;     // how much older than "now" its timestamp is
  std::uint32_t sequence = 0;  // distinguishes callbacks of one payment
};

// The ids of one run: every id starts with the run prefix, so runs never collide.
class Ids {
 public:
  explicit Ids(std::string prefix) : prefix_(std::move(prefix)) {}
  [[nodiscard]] const std::string& prefix() const { return prefix_; }
  [[nodiscard]] std::string payment_no(std::uint32_t payment) const;
  [[nodiscard]] std::string order_no(std::uint32_t payment) const;
  [[nodiscard]] std::string show_id(std::uint32_t payment) const;
  [[nodiscard]] std::string seat_id(std::uint32_t payment, std::uint32_t seat) const;
  [[nodiscard]] std::string callback_id(std::uint32_t payment, std::uint32_t sequence) const;
  // LIKE patterns that match exactly this run's payment and callback ids.
  [[nodiscard]] std::string payment_like() const { return like('P'); }
  [[nodiscard]] std::string callback_like() const { return like('C'); }

 private:
  [[nodiscard]] std::string make(char kind, std::uint32_t payment) const;
  [[nodiscard]] std::string like(char kind) const {
    std::string out(1, kind);
    out += prefix_;
    out += "-%";
    return out;
  }

  std::string prefix_;
};

struct PlanOptions {
  Scenario scenario = Scenario::unique;
  std::uint32_t payments = 1000;
  std::uint32_t duplicates = 100;  // storm only: deliveries of each callback
  std::uint64_t shuffle_seed = 1;
};

struct Plan {
  Scenario scenario = Scenario::unique;
  std::vector<PaymentPlan> payments;
  std::vector<CallbackPlan> callbacks;
  // Deliveries, as callback indexes; a phase starts only after the previous one is fully answered,
  // which is what makes the `mixed` end state exact.
  std::vector<std::vector<std::uint32_t>> phases;

  [[nodiscard]] std::uint64_t total_requests() const;
  [[nodiscard]] std::uint32_t shows() const;
};

// Pure: the same options give the same plan.
[[nodiscard]] Plan make_plan(const PlanOptions& options);

// A run prefix unique to this process and moment: lowercase base-36, 8 characters.
[[nodiscard]] std::string make_run_prefix();

}  // namespace seatflow::bench

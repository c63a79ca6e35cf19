// What the dev mock gateway knows of each payment: what it settled (SPEC §10, §13: its query
// answers and its daily bill come from them) and the payments created at it through the hmac
// gateway's payment API (SPEC §16), with their deadline, notify URL and whether they were closed.
// One lock over both, so that taking a payment and closing it are one step each: a payment closed
// here is never paid after, and a close finds a payment paid before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "channels/hmac/hmac_bill.hpp"

namespace seatflow::dev {

// Who asks the book to take a payment.
enum class MockOrigin : std::uint8_t {
  committed,  // the automatic callback after the engine committed a payment (SPEC §7)
  created,    // the automatic callback after a payment was created here (SPEC §16)
  demand,     // POST /api/mock-gateway/pay, or the checkout page's Pay and Fail buttons
};

// What the book decided of a take.
enum class MockVerdict : std::uint8_t {
  send,     // settled: send its callback
  closed,   // closed here: it takes no payment
  expired,  // created here and its deadline has passed: it takes no payment
  // An automatic callback that is not sent: of a payment created here that is settled already
  // (created), or after the engine's commit of a payment created here, whose creation's own
  // automatic callback is the one (committed), or of a creation the book no longer holds.
  settled,
  created_here,
  forgotten,
};

[[nodiscard]] std::string_view to_string(MockVerdict verdict);

// A payment created here (or only closed here: amount 0, no pay URL).
struct MockCreated {
  std::int64_t amount_cents = 0;
  std::int64_t expires_at_ms = 0;  // 0: no deadline
  std::string notify_url;
  std::string pay_url;
  std::int64_t closed_at_ms = 0;  // 0: open
};

// The book's rule, pure: what a take of a payment decides, given its creation here (nullptr: none)
// and whether it is settled here already.
[[nodiscard]] MockVerdict take_verdict(const MockCreated* created, bool settled, MockOrigin origin,
                                       std::int64_t now_ms);

// A payment to take: settled as `status` (1 paid, 2 failed) at `settled_at_ms` when the book says
// send; `amount_cents` (0: unknown) unless it was created here with its own.
struct MockTake {
  std::string payment_no;
  int status = 1;
  std::int64_t amount_cents = 0;
  MockOrigin origin = MockOrigin::demand;
  std::int64_t now_ms = 0;
  std::int64_t settled_at_ms = 0;
};

struct MockTaken {
  MockVerdict verdict = MockVerdict::send;
  std::string notify_url;  // where to send it: the creation's; empty = the engine's own
  std::int64_t amount_cents = 0;
};

enum class MockCreateOutcome : std::uint8_t {
  created,
  again,     // the same payment again: the same pay URL
  conflict,  // the same payment number with another amount
  closed,    // closed here before it was ever created
  expired,   // its deadline has passed already: nothing is created
  full,      // kCreatedMax payments held
};

[[nodiscard]] std::string_view to_string(MockCreateOutcome outcome);

struct MockCreateAnswer {
  MockCreateOutcome outcome = MockCreateOutcome::created;
  std::string pay_url;  // created and again
};

enum class MockCloseOutcome : std::uint8_t {
  closed,     // open until now, or closed already
  paid,       // settled as paid here
  not_found,  // never created here: remembered as closed, it takes no payment either
  full,       // not created here, and no room to remember its close
};

// Shared by the mock actor and the HTTP layer; thread-safe. Settlements beyond kEntriesMax push
// out the oldest; creations are held up to kCreatedMax, past which a creation or a close of a
// payment it does not hold is refused (503) unless it can forget one that ended
// kCreatedRetentionMs ago.
class MockGatewayBook {
 public:
  static constexpr std::size_t kEntriesMax = 100'000;
  static constexpr std::size_t kCreatedMax = 100'000;
  static constexpr std::int64_t kCreatedRetentionMs = 24LL * 3600 * 1000;
  // How often a full table is scanned for payments it may forget.
  static constexpr std::int64_t kCreatedPruneIntervalMs = 1'000;

  // Settled now, amount unknown (0: left out of the bill).
  void settle(const std::string& payment_no, int status);
  void settle(const std::string& payment_no, int status, std::int64_t amount_cents,
              std::int64_t at_ms);
  // A refund of a payment it settled as paid; false when it did not.
  bool refund(const std::string& payment_no, std::int64_t amount_cents, std::int64_t at_ms);
  [[nodiscard]] std::optional<int> status_of(const std::string& payment_no) const;
  // The bill of [start_ms, end_ms): payments paid (with a known amount) and refunds made then, in
  // time order; the trade number of payment P is "mock-P".
  [[nodiscard]] std::vector<channels::HmacBillEntry> bill(std::int64_t start_ms,
                                                          std::int64_t end_ms) const;

  // take_verdict under the lock, settling the payment when it says send.
  [[nodiscard]] MockTaken take(const MockTake& take);
  // A creation (its amount above 0), or what the payment number already is here.
  [[nodiscard]] MockCreateAnswer create(const std::string& payment_no, MockCreated created,
                                        std::int64_t now_ms);
  [[nodiscard]] MockCloseOutcome close(const std::string& payment_no, std::int64_t now_ms);
  [[nodiscard]] std::optional<MockCreated> created(const std::string& payment_no) const;

 private:
  struct Entry {
    int status = 0;
    std::int64_t amount_cents = 0;
    std::int64_t at_ms = 0;
    std::int64_t refund_cents = 0;
    std::int64_t refunded_at_ms = 0;
  };
  void settle_locked(const std::string& payment_no, int status, std::int64_t amount_cents,
                     std::int64_t at_ms);
  // Room for one more creation: true when there is, after forgetting what ended long ago.
  [[nodiscard]] bool room_locked(std::int64_t now_ms);

  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::deque<std::string> order_;  // insertion order, for the bound
  std::unordered_map<std::string, MockCreated> created_;
  std::int64_t next_prune_ms_ = 0;
};

}  // namespace seatflow::dev

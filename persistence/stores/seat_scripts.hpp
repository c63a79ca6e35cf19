// The seat hash in Redis (SPEC §3): key naming and every seat script, the API's and callbacks'
// (lock, mark_sold, release) and the reconciler's repairs. Each script carries out ops of
// domain::next_seat, which tests/integration/seat_table_test.cpp runs them against.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/state_machine.hpp"
#include "persistence/drivers/errc.hpp"
#include "persistence/drivers/redis.hpp"

namespace seatflow::persistence {

// seatflow:seats:{<show_id>} — the braces are a Redis Cluster hash tag.
// The part of every seat key before its show id (written here only; the checker scans by it).
inline constexpr std::string_view kSeatKeyHead = "seatflow:seats:{";
[[nodiscard]] std::string seat_key(std::string_view show_id);
// A seat's value in that hash: `1:<order>` locked by the order, `2:<order>` sold to it.
[[nodiscard]] std::string locked_seat(std::string_view order_no);
[[nodiscard]] std::string sold_seat(std::string_view order_no);

// SeatOp::lock.
extern const std::string_view kLockSeatsLua;
// SeatOp::mark_sold, for several orders in one call.
extern const std::string_view kMarkSoldLua;
// SeatOp::release (with `1:<order>`) and SeatOp::release_sold (with `2:<order>`).
extern const std::string_view kReleaseLua;
// SeatOp::repair_sold, for a PAID order's claimed seats (only those are passed): anything but
// `2:<order>` → `2:<order>`. Reply {1, changed, seat, previous, ...} naming the seats another
// order's value was taken from (that order holds no claim on them).
extern const std::string_view kForceSoldLua;
// SeatOp::repair_free, for a CANCELLED or REFUNDED order: `1:<order>` or `2:<order>` → free.
// Reply {1, released}.
extern const std::string_view kReleaseFinishedLua;
// SeatOp::repair_locked, for a PENDING order's claimed seats: free or another order's value →
// `1:<order>`; its own seats stay. Reply {1, changed, seat, previous, ...} as for kForceSoldLua.
extern const std::string_view kRelockLua;

// A sale kMarkSoldLua refused: its 0-based position in the call, its first seat held by another
// order, and that seat's value.
struct SeatRefusal {
  std::size_t position = 0;
  std::string seat_id;
  std::string holder;
};

// kMarkSoldLua's reply for a call of `sales` sales: the refusals, or errc::redis_unavailable
// (the detail Redis's error, or the reply not one the script gives: then no sale may be taken as
// done).
[[nodiscard]] Result<std::vector<SeatRefusal>> parse_mark_sold_reply(const RedisReply& reply,
                                                                     std::size_t sales);

// What a reconciler repair did: the seats it changed, and each seat whose value named another
// order (the seat, that value) before the repair took it over.
struct SeatRepair {
  long long changed = 0;
  std::vector<std::pair<std::string, std::string>> taken;
};

// One order's seats to sell, for SeatStore::mark_sold_all.
struct SeatSale {
  std::string_view show_id;
  std::string_view order_no;
  const std::vector<std::string>* seats = nullptr;
};

// Each call of a script on one order's seats answers how many seats it changed (release and
// release_sold count them; lock and mark_sold answer 0), or is refused: errc::conflict when a seat
// is not in a state the operation accepts (nothing changed; the failure names the seat as
// "seatId", its detail says what holds it) or errc::redis_unavailable (Redis unreachable, failing,
// or a reply the script does not give; the detail says which).
class SeatStore {
 public:
  explicit SeatStore(RedisClient& redis);

  [[nodiscard]] RedisClient& redis() { return redis_; }

  [[nodiscard]] Result<std::int64_t> lock(std::string_view show_id, std::string_view order_no,
                                          const std::vector<std::string>& seats);
  [[nodiscard]] Result<std::int64_t> release(std::string_view show_id, std::string_view order_no,
                                             const std::vector<std::string>& seats);
  // mark_sold for every sale in one script call (kMarkSoldLua), each sale all-or-nothing on
  // its own; returns the positions of the sales that failed (another order's seat), or of all of
  // them when Redis is unavailable or its reply is not one the script gives. The call names every
  // show's seat hash as a key, so on a Redis Cluster the sales would have to be split by hash slot
  // first; SeatFlow talks to one server.
  [[nodiscard]] std::vector<std::size_t> mark_sold_all(const std::vector<SeatSale>& sales);
  // The script call of mark_sold_all: the refused sales with their first refused seat and its
  // holder, or errc::redis_unavailable (Redis unavailable, or a reply the script does not give).
  [[nodiscard]] Result<std::vector<SeatRefusal>> sell(const std::vector<SeatSale>& sales);
  // Refund only: `2:<order>` → free; never touches another order's seats.
  [[nodiscard]] Result<std::int64_t> release_sold(std::string_view show_id,
                                                  std::string_view order_no,
                                                  const std::vector<std::string>& seats);
  // The reconciler's repair `op` (SeatOp::repair_sold, repair_locked or repair_free) of the order's
  // seats, in one script call; errc::redis_unavailable when Redis is unavailable or the reply is
  // not the script's.
  [[nodiscard]] Result<SeatRepair> repair(domain::SeatOp op, std::string_view show_id,
                                          std::string_view order_no,
                                          const std::vector<std::string>& seats);

 private:
  // One script call on the show's seat hash with ARGV = {first, seats...}: `first` is the order
  // for kLockSeatsLua, the held value to free for kReleaseLua.
  Result<std::int64_t> run(std::string_view script, const std::string& sha,
                           std::string_view show_id, std::string_view first,
                           const std::vector<std::string>& seats);

  RedisClient& redis_;
  std::string lock_sha_;
  std::string mark_sold_sha_;
  std::string release_sha_;
  std::string force_sold_sha_;
  std::string release_finished_sha_;
  std::string relock_sha_;
};

}  // namespace seatflow::persistence

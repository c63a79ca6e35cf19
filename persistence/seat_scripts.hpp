// The seat hash in Redis (SPEC §3): key naming and the lock / mark_sold / release Lua scripts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "persistence/errc.hpp"
#include "persistence/redis.hpp"

namespace seatflow::persistence {

// seatflow:seats:{<show_id>} — the braces are a Redis Cluster hash tag.
[[nodiscard]] std::string seat_key(std::string_view show_id);
// A seat's value in that hash: `1:<order>` locked by the order, `2:<order>` sold to it.
[[nodiscard]] std::string locked_seat(std::string_view order_no);
[[nodiscard]] std::string sold_seat(std::string_view order_no);

extern const std::string_view kLockSeatsLua;
extern const std::string_view kMarkSoldLua;
extern const std::string_view kReleaseLua;

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
  // mark_sold for one order: mark_sold_all with one sale, the refused seat and its holder named.
  [[nodiscard]] Result<std::int64_t> mark_sold(std::string_view show_id, std::string_view order_no,
                                               const std::vector<std::string>& seats);
  [[nodiscard]] Result<std::int64_t> release(std::string_view show_id, std::string_view order_no,
                                             const std::vector<std::string>& seats);
  // mark_sold for every sale in one script call (kMarkSoldLua), each sale all-or-nothing on
  // its own; returns the positions of the sales that failed (another order's seat), or of all of
  // them when Redis is unavailable or its reply is not one the script gives. The call names every
  // show's seat hash as a key, so on a Redis Cluster the sales would have to be split by hash slot
  // first; SeatFlow talks to one server.
  [[nodiscard]] std::vector<std::size_t> mark_sold_all(const std::vector<SeatSale>& sales);
  // Refund only: `2:<order>` → free; never touches another order's seats.
  [[nodiscard]] Result<std::int64_t> release_sold(std::string_view show_id,
                                                  std::string_view order_no,
                                                  const std::vector<std::string>& seats);

 private:
  // One script call for all the sales: the refused ones, or errc::redis_unavailable (Redis
  // unavailable, or a reply the script does not give).
  Result<std::vector<SeatRefusal>> sell(const std::vector<SeatSale>& sales);
  // One script call on the show's seat hash with ARGV = {first, seats...}: `first` is the order
  // for kLockSeatsLua, the held value to free for kReleaseLua.
  Result<std::int64_t> run(std::string_view script, const std::string& sha,
                           std::string_view show_id, std::string_view first,
                           const std::vector<std::string>& seats);

  RedisClient& redis_;
  std::string lock_sha_;
  std::string mark_sold_sha_;
  std::string release_sha_;
};

}  // namespace seatflow::persistence

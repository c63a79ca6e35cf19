// The seat hash in Redis (SPEC §3): key naming and the lock / mark_sold / release Lua scripts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "persistence/redis.hpp"

namespace seatflow::persistence {

// seatflow:seats:{<show_id>} — the braces are a Redis Cluster hash tag.
[[nodiscard]] std::string seat_key(std::string_view show_id);

extern const std::string_view kLockSeatsLua;
extern const std::string_view kMarkSoldLua;
extern const std::string_view kMarkSoldAllLua;
extern const std::string_view kReleaseSeatsLua;
extern const std::string_view kReleaseSoldLua;

enum class SeatOutcome : std::uint8_t {
  ok,
  taken,        // a seat is not in a state the operation accepts; nothing changed
  unavailable,  // Redis could not be reached or answered with an error
};

struct SeatResult {
  SeatOutcome outcome = SeatOutcome::unavailable;
  std::string seat_id;    // the offending seat, for `taken`
  std::string holder;     // its current value ("" when free), for `taken`
  std::string error;      // for `unavailable`
  long long changed = 0;  // seats released, for release
};

// One order's seats to sell, for SeatStore::mark_sold_all.
struct SeatSale {
  std::string_view show_id;
  std::string_view order_no;
  const std::vector<std::string>* seats = nullptr;
};

class SeatStore {
 public:
  explicit SeatStore(RedisClient& redis);

  [[nodiscard]] RedisClient& redis() { return redis_; }

  [[nodiscard]] SeatResult lock(std::string_view show_id, std::string_view order_no,
                                const std::vector<std::string>& seats);
  [[nodiscard]] SeatResult mark_sold(std::string_view show_id, std::string_view order_no,
                                     const std::vector<std::string>& seats);
  [[nodiscard]] SeatResult release(std::string_view show_id, std::string_view order_no,
                                   const std::vector<std::string>& seats);
  // mark_sold for every sale in one script call (kMarkSoldAllLua), each sale all-or-nothing on
  // its own; returns the positions of the sales that failed (another order's seat), or of all of
  // them when Redis is unavailable. The call names every show's seat hash as a key, so on a Redis
  // Cluster the sales would have to be split by hash slot first; SeatFlow talks to one server.
  [[nodiscard]] std::vector<std::size_t> mark_sold_all(const std::vector<SeatSale>& sales);
  // Refund only: `2:<order>` → free; never touches another order's seats.
  [[nodiscard]] SeatResult release_sold(std::string_view show_id, std::string_view order_no,
                                        const std::vector<std::string>& seats);

 private:
  SeatResult run(std::string_view script, const std::string& sha, std::string_view show_id,
                 std::string_view order_no, const std::vector<std::string>& seats);

  RedisClient& redis_;
  std::string lock_sha_;
  std::string mark_sold_sha_;
  std::string mark_sold_all_sha_;
  std::string release_sha_;
  std::string release_sold_sha_;
};

}  // namespace seatflow::persistence

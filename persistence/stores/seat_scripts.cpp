// Lua for the seat transitions; each script checks every seat first, then changes all or none.
// What each script does to one seat is domain::next_seat's answer for its op.
#include "persistence/stores/seat_scripts.hpp"

#include <cassert>
#include <numeric>

#include "domain/assert.hpp"
#include "domain/ids.hpp"

namespace seatflow::persistence {
namespace {

// A seat not in a state the operation accepts: named for the client, its holder in the detail.
Failure seat_taken(const std::string& seat_id, const std::string& holder) {
  return refused(errc::conflict, "seat " + seat_id + " is held as " + holder, {"seatId", seat_id});
}

}  // namespace

// KEYS[1] seat hash; ARGV[1] order_no; ARGV[2..] seat ids. Reply {1} or {0, seat, holder}.
const std::string_view kLockSeatsLua = R"lua(
local mine = '1:' .. ARGV[1]
for i = 2, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v and v ~= mine then
    return {0, ARGV[i], v}
  end
end
for i = 2, #ARGV do
  redis.call('HSET', KEYS[1], ARGV[i], mine)
end
return {1}
)lua";

// SPEC §3's mark_sold for one or several sales in one call, each sale checked and applied on its
// own, in the order given (a later sale sees an earlier one's seats). Each seat must be 1:order,
// 2:order or free; then all of the sale's seats become 2:order. Never 2→1, never 2→0. Free is
// accepted because the caller holds the order's row lock and a live order holds its seat claims in
// PostgreSQL (SPEC §9): a free seat is one Redis lost, and selling it heals the seat. Another
// order's value fails the sale, which then changes no seat.
// KEYS[k]: sale k's seat hash; ARGV, per sale: order_no, seat count, seat ids.
// Reply: for each failed sale in turn, its 1-based position, its first refused seat and that
// seat's value. Seats are read and written 64 at a time (HMGET, multi-field HSET): two commands
// per sale for common orders, and unpack() stays far below Lua's stack limit for any order size.
const std::string_view kMarkSoldLua = R"lua(
local chunk = 64
local failed = {}
local i, sale = 1, 0
while i <= #ARGV do
  sale = sale + 1
  local key = KEYS[sale]
  local locked = '1:' .. ARGV[i]
  local sold = '2:' .. ARGV[i]
  local first = i + 2
  local last = i + 1 + tonumber(ARGV[i + 1])
  local seat, holder = nil, nil
  for a = first, last, chunk do
    local values = redis.call('HMGET', key, unpack(ARGV, a, math.min(a + chunk - 1, last)))
    for n, v in ipairs(values) do
      if v and v ~= locked and v ~= sold then
        seat, holder = ARGV[a + n - 1], v
        break
      end
    end
    if seat then break end
  end
  if seat then
    failed[#failed + 1] = sale
    failed[#failed + 1] = seat
    failed[#failed + 1] = holder
  else
    for a = first, last, chunk do
      local fields = {}
      for j = a, math.min(a + chunk - 1, last) do
        fields[#fields + 1] = ARGV[j]
        fields[#fields + 1] = sold
      end
      redis.call('HSET', key, unpack(fields))
    end
  end
  i = last + 1
end
return failed
)lua";

// Frees each seat ARGV[2..] whose value is exactly ARGV[1] ('1:order' to release a lock, '2:order'
// to give a refunded order's sold seats back); a seat holding anything else is never touched.
// Reply {1, released}.
const std::string_view kReleaseLua = R"lua(
local held = ARGV[1]
local n = 0
for i = 2, #ARGV do
  if redis.call('HGET', KEYS[1], ARGV[i]) == held then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return {1, n}
)lua";

// The reconciler's repairs: the claims in PostgreSQL decide, so they never refuse.
const std::string_view kForceSoldLua = R"lua(
local sold = '2:' .. ARGV[1]
local out = {1, 0}
for i = 2, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v ~= sold then
    redis.call('HSET', KEYS[1], ARGV[i], sold)
    out[2] = out[2] + 1
    if v and v ~= '1:' .. ARGV[1] then
      out[#out + 1] = ARGV[i]
      out[#out + 1] = v
    end
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
  if v ~= locked and v ~= sold then
    redis.call('HSET', KEYS[1], ARGV[i], locked)
    out[2] = out[2] + 1
    if v then
      out[#out + 1] = ARGV[i]
      out[#out + 1] = v
    end
  end
end
return out
)lua";

std::string seat_key(std::string_view show_id) {
  std::string key(kSeatKeyHead);
  key.append(show_id);
  key.push_back('}');
  return key;
}

std::string locked_seat(std::string_view order_no) {
  return "1:" + std::string(order_no);
}

std::string sold_seat(std::string_view order_no) {
  return "2:" + std::string(order_no);
}

SeatStore::SeatStore(RedisClient& redis)
    : redis_(redis),
      lock_sha_(script_sha1(kLockSeatsLua)),
      mark_sold_sha_(script_sha1(kMarkSoldLua)),
      release_sha_(script_sha1(kReleaseLua)),
      force_sold_sha_(script_sha1(kForceSoldLua)),
      release_finished_sha_(script_sha1(kReleaseFinishedLua)),
      relock_sha_(script_sha1(kRelockLua)) {}

Result<std::int64_t> SeatStore::run(std::string_view script, const std::string& sha,
                                    std::string_view show_id, std::string_view first,
                                    const std::vector<std::string>& seats) {
  SEATFLOW_ASSERT(domain::is_id(show_id));
  SEATFLOW_ASSERT(domain::is_id(first));
  SEATFLOW_ASSERT(!seats.empty());
  std::vector<std::string> args;
  args.reserve(seats.size() + 1);
  args.emplace_back(first);
  args.insert(args.end(), seats.begin(), seats.end());
  const auto reply = redis_.eval_script(script, sha, {seat_key(show_id)}, args);
  if (!reply.ok) {
    return refused(errc::redis_unavailable, reply.error);
  }
  if (reply.elements.empty()) {
    return refused(errc::redis_unavailable, "unexpected script reply");
  }
  if (reply.elements[0].integer == 1) {
    return std::int64_t{reply.elements.size() > 1 ? reply.elements[1].integer : 0};
  }
  return reply.elements.size() >= 3 ? seat_taken(reply.elements[1].str, reply.elements[2].str)
                                    : seat_taken({}, {});
}

Result<std::int64_t> SeatStore::lock(std::string_view show_id, std::string_view order_no,
                                     const std::vector<std::string>& seats) {
  return run(kLockSeatsLua, lock_sha_, show_id, order_no, seats);
}

Result<std::int64_t> SeatStore::release(std::string_view show_id, std::string_view order_no,
                                        const std::vector<std::string>& seats) {
  return run(kReleaseLua, release_sha_, show_id, locked_seat(order_no), seats);
}

}  // namespace seatflow::persistence

namespace seatflow::persistence {

Result<std::vector<SeatRefusal>> parse_mark_sold_reply(const RedisReply& reply, std::size_t sales) {
  if (!reply.ok) {
    return refused(errc::redis_unavailable, reply.error);
  }
  // Triples of (position, seat, holder), positions rising within 1..sales.
  const auto& e = reply.elements;
  std::vector<SeatRefusal> refusals;
  refusals.reserve(e.size() / 3);
  std::size_t previous = 0;
  for (std::size_t i = 0; i < e.size(); i += 3) {
    const auto position = e[i].integer;
    if (i + 2 >= e.size() || position <= static_cast<long long>(previous) ||
        position > static_cast<long long>(sales)) {
      return refused(errc::redis_unavailable, "unexpected mark_sold reply");
    }
    previous = static_cast<std::size_t>(position);
    refusals.push_back({previous - 1, e[i + 1].str, e[i + 2].str});
  }
  return refusals;
}

Result<std::vector<SeatRefusal>> SeatStore::sell(const std::vector<SeatSale>& sales) {
  if (sales.empty()) {
    return std::vector<SeatRefusal>{};
  }
  // KEYS: each sale's seat hash (a show's hash repeats for each of its sales); ARGV, per sale:
  // order_no, seat count, seats.
  std::vector<std::string> keys;
  std::vector<std::string> args;
  keys.reserve(sales.size());
  args.reserve(sales.size() * 4);
  for (const auto& sale : sales) {
    keys.push_back(seat_key(sale.show_id));
    args.emplace_back(sale.order_no);
    args.push_back(std::to_string(sale.seats->size()));
    args.insert(args.end(), sale.seats->begin(), sale.seats->end());
  }
  return parse_mark_sold_reply(redis_.eval_script(kMarkSoldLua, mark_sold_sha_, keys, args),
                               sales.size());
}

std::vector<std::size_t> SeatStore::mark_sold_all(const std::vector<SeatSale>& sales) {
  std::vector<std::size_t> failed;
  const auto sold = sell(sales);
  if (!sold.ok()) {
    failed.resize(sales.size());
    std::iota(failed.begin(), failed.end(), std::size_t{0});
    return failed;
  }
  failed.reserve(sold.value().size());
  for (const auto& r : sold.value()) {
    failed.push_back(r.position);
  }
  return failed;
}

Result<std::int64_t> SeatStore::release_sold(std::string_view show_id, std::string_view order_no,
                                             const std::vector<std::string>& seats) {
  return run(kReleaseLua, release_sha_, show_id, sold_seat(order_no), seats);
}

Result<SeatRepair> SeatStore::repair(domain::SeatOp op, std::string_view show_id,
                                     std::string_view order_no,
                                     const std::vector<std::string>& seats) {
  std::string_view script = kForceSoldLua;
  const std::string* sha = &force_sold_sha_;
  switch (op) {
    case domain::SeatOp::repair_sold:
      break;
    case domain::SeatOp::repair_locked:
      script = kRelockLua;
      sha = &relock_sha_;
      break;
    case domain::SeatOp::repair_free:
      script = kReleaseFinishedLua;
      sha = &release_finished_sha_;
      break;
    case domain::SeatOp::lock:
    case domain::SeatOp::mark_sold:
    case domain::SeatOp::release:
    case domain::SeatOp::release_sold:
      assert(false && "SeatStore::repair runs the reconciler's repairs only");
      return refused(errc::redis_unavailable, "not a repair");
  }
  std::vector<std::string> args;
  args.reserve(seats.size() + 1);
  args.emplace_back(order_no);
  args.insert(args.end(), seats.begin(), seats.end());
  const auto reply = redis_.eval_script(script, *sha, {seat_key(show_id)}, args);
  if (!reply.ok) {
    return refused(errc::redis_unavailable, reply.error);
  }
  if (reply.elements.size() < 2) {
    return refused(errc::redis_unavailable, "unexpected repair reply");
  }
  SeatRepair repaired{reply.elements[1].integer, {}};
  for (std::size_t k = 2; k + 1 < reply.elements.size(); k += 2) {
    repaired.taken.emplace_back(reply.elements[k].str, reply.elements[k + 1].str);
  }
  return repaired;
}

}  // namespace seatflow::persistence

// Lua for the seat transitions; each script checks every seat first, then changes all or none.
#include "persistence/seat_scripts.hpp"

namespace seatflow::persistence {

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

// Each seat must be 1:order, 2:order or free; then all become 2:order. Never 2→1, never 2→0.
// Free is accepted because the caller holds the order's row lock and a live order holds its seat
// claims in PostgreSQL (SPEC §9): a free seat is one Redis lost, and selling it heals the seat.
// Another order's value still fails and changes nothing.
const std::string_view kMarkSoldLua = R"lua(
local locked = '1:' .. ARGV[1]
local sold = '2:' .. ARGV[1]
for i = 2, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v and v ~= locked and v ~= sold then
    return {0, ARGV[i], v}
  end
end
for i = 2, #ARGV do
  redis.call('HSET', KEYS[1], ARGV[i], sold)
end
return {1}
)lua";

// 1:order → free; sold seats and other orders' seats are never touched. Reply {1, released}.
const std::string_view kReleaseSeatsLua = R"lua(
local mine = '1:' .. ARGV[1]
local n = 0
for i = 2, #ARGV do
  if redis.call('HGET', KEYS[1], ARGV[i]) == mine then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return {1, n}
)lua";

// A full refund gives the order's sold seats back: 2:order → free. Reply {1, released}.
const std::string_view kReleaseSoldLua = R"lua(
local sold = '2:' .. ARGV[1]
local n = 0
for i = 2, #ARGV do
  if redis.call('HGET', KEYS[1], ARGV[i]) == sold then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return {1, n}
)lua";

std::string seat_key(std::string_view show_id) {
  std::string key = "seatflow:seats:{";
  key.append(show_id);
  key.push_back('}');
  return key;
}

SeatStore::SeatStore(RedisClient& redis)
    : redis_(redis),
      lock_sha_(script_sha1(kLockSeatsLua)),
      mark_sold_sha_(script_sha1(kMarkSoldLua)),
      release_sha_(script_sha1(kReleaseSeatsLua)),
      release_sold_sha_(script_sha1(kReleaseSoldLua)) {}

SeatResult SeatStore::run(std::string_view script, const std::string& sha, std::string_view show_id,
                          std::string_view order_no, const std::vector<std::string>& seats) {
  std::vector<std::string> args;
  args.reserve(seats.size() + 1);
  args.emplace_back(order_no);
  args.insert(args.end(), seats.begin(), seats.end());
  const auto reply = redis_.eval_script(script, sha, {seat_key(show_id)}, args);
  SeatResult result;
  if (!reply.ok) {
    result.error = reply.error;
    return result;
  }
  if (reply.elements.empty()) {
    result.error = "unexpected script reply";
    return result;
  }
  if (reply.elements[0].integer == 1) {
    result.outcome = SeatOutcome::ok;
    if (reply.elements.size() > 1) {
      result.changed = reply.elements[1].integer;
    }
    return result;
  }
  result.outcome = SeatOutcome::taken;
  if (reply.elements.size() >= 3) {
    result.seat_id = reply.elements[1].str;
    result.holder = reply.elements[2].str;
  }
  return result;
}

SeatResult SeatStore::lock(std::string_view show_id, std::string_view order_no,
                           const std::vector<std::string>& seats) {
  return run(kLockSeatsLua, lock_sha_, show_id, order_no, seats);
}

SeatResult SeatStore::mark_sold(std::string_view show_id, std::string_view order_no,
                                const std::vector<std::string>& seats) {
  return run(kMarkSoldLua, mark_sold_sha_, show_id, order_no, seats);
}

SeatResult SeatStore::release(std::string_view show_id, std::string_view order_no,
                              const std::vector<std::string>& seats) {
  return run(kReleaseSeatsLua, release_sha_, show_id, order_no, seats);
}

}  // namespace seatflow::persistence

namespace seatflow::persistence {

std::vector<std::size_t> SeatStore::mark_sold_all(const std::vector<SeatSale>& sales) {
  std::vector<std::vector<std::string>> commands;
  commands.reserve(sales.size());
  for (const auto& sale : sales) {
    std::vector<std::string> cmd = {"EVALSHA", mark_sold_sha_, "1", seat_key(sale.show_id),
                                    std::string(sale.order_no)};
    cmd.insert(cmd.end(), sale.seats->begin(), sale.seats->end());
    commands.push_back(std::move(cmd));
  }
  std::vector<std::size_t> failed;
  if (commands.empty()) {
    return failed;
  }
  const auto replies = redis_.pipeline_scripts(commands, kMarkSoldLua);
  for (std::size_t k = 0; k < sales.size(); ++k) {
    const bool ok = k < replies.size() && replies[k].ok && !replies[k].elements.empty() &&
                    replies[k].elements[0].integer == 1;
    if (!ok) {
      failed.push_back(k);
    }
  }
  return failed;
}

SeatResult SeatStore::release_sold(std::string_view show_id, std::string_view order_no,
                                   const std::vector<std::string>& seats) {
  return run(kReleaseSoldLua, release_sold_sha_, show_id, order_no, seats);
}

}  // namespace seatflow::persistence

// The eviction-policy read and the readiness write probe, over one RedisClient.
#include "persistence/drivers/redis_durability.hpp"

namespace seatflow::persistence {

EvictionPolicy read_eviction_policy(RedisClient& redis) {
  const auto reply = redis.command({"CONFIG", "GET", "maxmemory-policy"});
  if (!reply.ok) {
    return {
        reply.is_error_reply ? EvictionPolicy::Kind::unreadable : EvictionPolicy::Kind::unreachable,
        reply.error};
  }
  // A map of one entry, as a flat array: ["maxmemory-policy", "<policy>"].
  if (reply.elements.size() != 2 || reply.elements[1].str.empty()) {
    return {EvictionPolicy::Kind::unreadable, "CONFIG GET maxmemory-policy gave no policy"};
  }
  const auto& policy = reply.elements[1].str;
  return {policy == kRequiredEvictionPolicy ? EvictionPolicy::Kind::noeviction
                                            : EvictionPolicy::Kind::evicting,
          policy};
}

RedisWriteProbe probe_redis_write(RedisClient& redis, std::string_view value) {
  const auto reply = redis.command({"SET", std::string(kHealthWriteKey), std::string(value), "PX",
                                    std::to_string(kHealthWriteTtlMs)});
  if (reply.ok) {
    return {RedisWriteProbe::Kind::writable, {}};
  }
  return {
      reply.is_error_reply ? RedisWriteProbe::Kind::refused : RedisWriteProbe::Kind::unreachable,
      reply.error};
}

}  // namespace seatflow::persistence

// Redis that lies about durability (SPEC §14): its eviction policy, read at start and by the
// readiness prober, and a write probe that tells a Redis refusing writes (OOM, READONLY, MISCONF)
// from one that answers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "persistence/drivers/redis.hpp"

namespace seatflow::persistence {

// The one policy under which Redis never drops a key to make room: a seat hash or the event
// stream evicted is a sale lost from Redis's view (SPEC §3).
inline constexpr std::string_view kRequiredEvictionPolicy = "noeviction";

// The key the readiness prober writes (with a short expiry) to learn whether Redis takes writes.
inline constexpr std::string_view kHealthWriteKey = "seatflow:health:write";
inline constexpr std::uint32_t kHealthWriteTtlMs = 10'000;

// What `CONFIG GET maxmemory-policy` told.
struct EvictionPolicy {
  enum class Kind : std::uint8_t {
    noeviction,   // no key is ever evicted
    evicting,     // any other policy: keys may vanish under memory pressure
    unreadable,   // CONFIG refused (renamed, forbidden by an ACL) or an answer of another shape
    unreachable,  // no answer at all
  };
  Kind kind = Kind::unreachable;
  // The policy's name (evicting, noeviction), else the error Redis or the transport gave.
  std::string detail;
};

// One CONFIG GET round trip; never throws.
[[nodiscard]] EvictionPolicy read_eviction_policy(RedisClient& redis);

// What the write probe saw.
struct RedisWriteProbe {
  enum class Kind : std::uint8_t { writable, refused, unreachable };
  Kind kind = Kind::unreachable;
  std::string detail;  // the refusal or transport error; empty when writable
};

// SET kHealthWriteKey <value> PX kHealthWriteTtlMs: one cheap write the server refuses exactly
// when it refuses the engine's seat writes (out of memory under noeviction, a read-only replica,
// a failed RDB save with stop-writes-on-bgsave-error). Never throws.
[[nodiscard]] RedisWriteProbe probe_redis_write(RedisClient& redis, std::string_view value);

}  // namespace seatflow::persistence

// Redis's eviction policy at start: prod refuses to start on an evicting or unreadable policy,
// dev warns.
#include "app/store_checks.hpp"

#include <string>

#include "app/log.hpp"
#include "persistence/drivers/redis.hpp"
#include "persistence/drivers/redis_durability.hpp"

namespace seatflow::app {

bool check_redis_eviction(const Config& config) {
  using Kind = persistence::EvictionPolicy::Kind;
  if (config.redis_url.empty()) {
    return true;  // load() refused a bad URL already; a tool without Redis has nothing to check
  }
  persistence::RedisClient redis(redis_endpoint(config), config.engine.store.redis_timeout_ms,
                                 nullptr);
  const auto policy = persistence::read_eviction_policy(redis);
  const bool prod = config.profile == Profile::prod;
  switch (policy.kind) {
    case Kind::noeviction:
      return true;
    case Kind::unreachable:
      logger().warn("event=redis_policy_check_skipped reason=redis_unavailable error={}",
                    quoted_value(policy.detail));
      return true;
    case Kind::evicting: {
      constexpr const char* kLine =
          "event={} setting=maxmemory-policy value={} required=noeviction message=\"Redis may "
          "evict keys under memory pressure (seat hashes, the event stream): set "
          "maxmemory-policy noeviction\"";
      if (prod) {
        logger().error(kLine, "startup_refused", quoted_value(policy.detail));
        return false;
      }
      logger().warn(kLine, "redis_evicting_policy", quoted_value(policy.detail));
      return true;
    }
    case Kind::unreadable: {
      constexpr const char* kLine =
          "event={} setting=maxmemory-policy value=unknown error={} message=\"CONFIG GET "
          "maxmemory-policy was refused (CONFIG renamed or forbidden): the eviction policy "
          "cannot be checked; noeviction is required\"";
      if (prod) {
        logger().error(kLine, "startup_refused", quoted_value(policy.detail));
        return false;
      }
      logger().warn(kLine, "redis_policy_unreadable", quoted_value(policy.detail));
      return true;
    }
  }
  return true;
}

}  // namespace seatflow::app

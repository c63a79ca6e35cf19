// Start-up checks of the stores' own settings that the engine cannot live with (SPEC §14).
#pragma once

#include "app/config.hpp"

namespace seatflow::app {

// Reads Redis's maxmemory-policy. Anything but noeviction (keys, the seat hashes and the event
// stream among them, may be evicted), or a policy that cannot be read (CONFIG renamed or
// forbidden): prod logs one `event=startup_refused setting=maxmemory-policy` line and answers
// false; dev warns and answers true. An unreachable Redis is left to the readiness probe (which,
// in prod, checks the policy too).
[[nodiscard]] bool check_redis_eviction(const Config& config);

}  // namespace seatflow::app

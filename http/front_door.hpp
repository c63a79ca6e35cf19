// The notify endpoint's front door (SPEC §14), before a request is parsed or verified: the
// source's allowlist of the channel (403) and the unverified-traffic bucket of the source (429
// with Retry-After while empty), which each notify failing verification or parsing spends. A
// source that keeps sending while refused (more than a burst of 429s since its bucket last held a
// token: it ignores Retry-After) has each further 429 held before it is written, its connection
// reading nothing meanwhile, so a flood costs the engine at most one request per connection per
// hold instead of one per round trip.
#pragma once

#include <cstdint>
#include <optional>

#include "channels/channel.hpp"
#include "http/config.hpp"
#include "http/probe.hpp"
#include "http/rate_limiter.hpp"
#include "http/source.hpp"
#include "http/types.hpp"

namespace seatflow::http {

// The hold of a flooding source's 429: its Retry-After, at most this long.
inline constexpr std::uint32_t kFloodHoldMsMax = 1'000;

class FrontDoor {
 public:
  FrontDoor(FrontDoorSettings settings, HttpProbe& probe);

  // The request's source: its peer, or behind a trusted proxy its X-Forwarded-For client.
  [[nodiscard]] SourceAddress source_of(const HttpRequest& request) const;
  // The answer to a notify for `channel` from `source` that must not go on (counted here), or
  // nullopt: 403 outside the channel's allowlist, 429 while the source's bucket is empty (held
  // when the source floods).
  [[nodiscard]] std::optional<HttpResponse> refusal(const channels::Channel& channel,
                                                    const SourceAddress& source);
  // A notify from `source` failed verification or parsing (400/401).
  void spend(const SourceAddress& source);

 private:
  FrontDoorSettings settings_;
  HttpProbe& probe_;
  UnverifiedLimiter limiter_;
};

}  // namespace seatflow::http

// The notify endpoint's front door (SPEC §14), before a request is parsed or verified: the
// source's allowlist of the channel (403) and the unverified-traffic bucket of the source (429
// with Retry-After while empty), which each notify failing verification or parsing spends.
#pragma once

#include <optional>

#include "channels/channel.hpp"
#include "http/config.hpp"
#include "http/probe.hpp"
#include "http/rate_limiter.hpp"
#include "http/source.hpp"
#include "http/types.hpp"

namespace seatflow::http {

class FrontDoor {
 public:
  FrontDoor(FrontDoorSettings settings, HttpProbe& probe);

  // The request's source: its peer, or behind a trusted proxy its X-Forwarded-For client.
  [[nodiscard]] SourceAddress source_of(const HttpRequest& request) const;
  // The answer to a notify for `channel` from `source` that must not go on (counted here), or
  // nullopt: 403 outside the channel's allowlist, 429 while the source's bucket is empty.
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

// The notify endpoint's front door (SPEC §14), before a request is parsed or verified: the
// source's allowlist of the channel (403) and the unverified-traffic bucket of the source (429
// with Retry-After while empty), which each notify failing verification or parsing spends. Behind
// a trusted proxy every source also spends the proxy's aggregate bucket; while that one is empty,
// only sources that sent a verified notify lately go on, so rotating X-Forwarded-For addresses
// buys a flood nothing. A source that keeps sending while refused (more than a burst of 429s since
// its bucket last held a token: it ignores Retry-After) has each further 429 held before it is
// written, its connection reading nothing meanwhile, so a flood costs the engine at most one
// request per connection per hold instead of one per round trip.
#pragma once

#include <atomic>
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

// Where a notify comes from: its source, and the trusted proxy (the TCP peer) it came through
// when the source is another address.
struct NotifySource {
  SourceAddress source;
  std::optional<SourceAddress> proxy;
};

class FrontDoor {
 public:
  FrontDoor(FrontDoorSettings settings, HttpProbe& probe);

  // The request's source: its peer, or behind a trusted proxy its X-Forwarded-For client.
  [[nodiscard]] NotifySource source_of(const HttpRequest& request) const;
  // Logs once (event=forwarded_header_untrusted) the first request that carries X-Forwarded-For
  // or Forwarded from a peer that is not a trusted proxy: an engine behind a proxy whose address
  // is not in SEATFLOW_TRUSTED_PROXIES sees every sender as the proxy (one bucket, one cap).
  void note_forwarded(const HttpRequest& request);
  // The answer to a notify for `channel` from `from` that must not go on (counted here), or
  // nullopt: 403 outside the channel's allowlist, 429 while the source's bucket is empty, or its
  // proxy's while the source sent no verified notify lately (held when the source floods).
  [[nodiscard]] std::optional<HttpResponse> refusal(const channels::Channel& channel,
                                                    const NotifySource& from);
  // A notify from `from` failed verification or parsing (400/401): its source's token and its
  // proxy's.
  void spend(const NotifySource& from);
  // A notify from `from` verified: behind a proxy, its source goes on while the proxy's bucket is
  // empty.
  void verified(const NotifySource& from);

 private:
  [[nodiscard]] HttpResponse too_many(const channels::Channel& channel, const Refusal& limited);

  FrontDoorSettings settings_;
  HttpProbe& probe_;
  UnverifiedLimiter limiter_;
  UnverifiedLimiter proxies_;
  VerifiedSources verified_;
  std::atomic<bool> forwarded_warned_{false};
};

}  // namespace seatflow::http

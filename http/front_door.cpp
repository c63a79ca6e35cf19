// The allowlists and the unverified-traffic buckets in front of the notify endpoint.
#include "http/front_door.hpp"

#include <algorithm>
#include <string>

#include "http/log.hpp"

namespace seatflow::http {

FrontDoor::FrontDoor(FrontDoorSettings settings, HttpProbe& probe)
    : settings_(std::move(settings)),
      probe_(probe),
      limiter_(settings_.unverified),
      proxies_(settings_.per_proxy),
      verified_(settings_.unverified.sources_max) {}

NotifySource FrontDoor::source_of(const HttpRequest& request) const {
  if (settings_.trusted_proxies.empty()) {
    return {request.peer, std::nullopt};
  }
  const auto forwarded = request.headers.find("x-forwarded-for");
  const auto source = resolve_source(
      request.peer, forwarded == request.headers.end() ? std::string_view{} : forwarded->second,
      settings_.trusted_proxies);
  if (source == request.peer) {
    return {source, std::nullopt};
  }
  return {source, request.peer};
}

void FrontDoor::note_forwarded(const HttpRequest& request) {
  if (forwarded_warned_.load(std::memory_order_relaxed)) {
    return;
  }
  if (!request.headers.contains("x-forwarded-for") && !request.headers.contains("forwarded")) {
    return;
  }
  if (contains_any(settings_.trusted_proxies, request.peer) ||
      forwarded_warned_.exchange(true, std::memory_order_relaxed)) {
    return;
  }
  logger().warn(
      "event=forwarded_header_untrusted peer={} trusted_proxies={} detail=\"a request carries "
      "X-Forwarded-For or Forwarded from a peer outside SEATFLOW_TRUSTED_PROXIES: its header is "
      "ignored and the peer is the source; behind a proxy, list the proxy's addresses there or "
      "every sender shares the proxy's bucket, connection cap and allowlist\"",
      to_string(request.peer), settings_.trusted_proxies.empty() ? "none" : "other");
}

HttpResponse FrontDoor::too_many(const channels::Channel& channel, const Refusal& limited) {
  probe_.count_rate_limited(channel.id());
  return HttpResponse{
      429,
      std::string(channel.content_type()),
      channel.failure_body("too many unverified requests"),
      {{"Retry-After", std::to_string(limited.retry_after_s)}},
      limited.persistent ? std::min(limited.retry_after_s * 1000, kFloodHoldMsMax) : 0};
}

std::optional<HttpResponse> FrontDoor::refusal(const channels::Channel& channel,
                                               const NotifySource& from) {
  const auto id = channel.id();
  const auto& allowed = settings_.allowed_sources[static_cast<std::size_t>(id)];
  if (allowed && !contains_any(*allowed, from.source)) {
    probe_.count_source_refused(id);
    return HttpResponse{
        403, std::string(channel.content_type()), channel.failure_body("source not allowed"), {}};
  }
  const auto now = UnverifiedLimiter::Clock::now();
  if (const auto limited = limiter_.refusal(from.source, now); limited.retry_after_s != 0) {
    return too_many(channel, limited);
  }
  if (from.proxy) {
    if (const auto limited = proxies_.refusal(*from.proxy, now);
        limited.retry_after_s != 0 && !verified_.contains(from.source)) {
      return too_many(channel, limited);
    }
  }
  return std::nullopt;
}

void FrontDoor::spend(const NotifySource& from) {
  const auto now = UnverifiedLimiter::Clock::now();
  limiter_.spend(from.source, now);
  if (from.proxy) {
    proxies_.spend(*from.proxy, now);
  }
}

void FrontDoor::verified(const NotifySource& from) {
  if (from.proxy) {
    verified_.add(from.source);
  }
}

}  // namespace seatflow::http

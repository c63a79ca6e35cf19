// The allowlists and the unverified-traffic buckets in front of the notify endpoint.
#include "http/front_door.hpp"

#include <algorithm>
#include <string>

namespace seatflow::http {

FrontDoor::FrontDoor(FrontDoorSettings settings, HttpProbe& probe)
    : settings_(std::move(settings)), probe_(probe), limiter_(settings_.unverified) {}

SourceAddress FrontDoor::source_of(const HttpRequest& request) const {
  if (settings_.trusted_proxies.empty()) {
    return request.peer;
  }
  const auto forwarded = request.headers.find("x-forwarded-for");
  return resolve_source(request.peer,
                        forwarded == request.headers.end() ? std::string_view{} : forwarded->second,
                        settings_.trusted_proxies);
}

std::optional<HttpResponse> FrontDoor::refusal(const channels::Channel& channel,
                                               const SourceAddress& source) {
  const auto id = channel.id();
  const auto& allowed = settings_.allowed_sources[static_cast<std::size_t>(id)];
  if (allowed && !contains_any(*allowed, source)) {
    probe_.count_source_refused(id);
    return HttpResponse{
        403, std::string(channel.content_type()), channel.failure_body("source not allowed"), {}};
  }
  const auto limited = limiter_.refusal(source, UnverifiedLimiter::Clock::now());
  if (limited.retry_after_s == 0) {
    return std::nullopt;
  }
  probe_.count_rate_limited(id);
  return HttpResponse{
      429,
      std::string(channel.content_type()),
      channel.failure_body("too many unverified requests"),
      {{"Retry-After", std::to_string(limited.retry_after_s)}},
      limited.persistent ? std::min(limited.retry_after_s * 1000, kFloodHoldMsMax) : 0};
}

void FrontDoor::spend(const SourceAddress& source) {
  limiter_.spend(source, UnverifiedLimiter::Clock::now());
}

}  // namespace seatflow::http

// Request routing and the pre-engine notify checks (verify first: no log, no write before it).
#include "http/routing.hpp"

#include "http/status.hpp"

namespace seatflow::http {
namespace {

constexpr std::string_view kNotifyPrefix = "/api/payment/notify/";

}  // namespace

Route route_request(std::string_view method, std::string_view target) {
  Route route;
  route.path = target.substr(0, target.find('?'));
  const auto path = route.path;
  // The route `kind` when `method` is `allowed` (GET or POST), else 405.
  const auto only = [&](RouteKind kind, std::string_view allowed) {
    route.allow = allowed == "GET" ? kAllowGet : kAllowPost;
    route.kind = method == allowed ? kind : RouteKind::method_not_allowed;
  };
  if (path.starts_with(kNotifyPrefix)) {
    only(RouteKind::notify, "POST");
    route.channel = path.substr(kNotifyPrefix.size());
  } else if (path.starts_with("/api/")) {
    route.kind = RouteKind::orders_api;  // its own table answers 404 and 405
  } else if (path == "/console" || path.starts_with("/console/")) {
    only(RouteKind::console, "GET");
  } else if (path == "/healthz") {
    only(RouteKind::healthz, "GET");
  } else if (path == "/readyz") {
    only(RouteKind::readyz, "GET");
  } else if (path == "/metrics") {
    only(RouteKind::metrics, "GET");
  }
  return route;
}

std::variant<HttpResponse, domain::VerifiedCallback> check_notify(
    const channels::Registry& channels, std::string_view channel_name, const HttpRequest& request,
    std::int64_t now_ms, HttpProbe& probe) {
  const auto* channel = channels.find(channel_name);
  if (channel == nullptr) {
    return HttpResponse{http_status(channels::errc::unknown_channel),
                        "text/plain",
                        channels::make_error_code(channels::errc::unknown_channel).message(),
                        {}};
  }
  const channels::InboundRequest inbound{request.body, &request.headers, now_ms};
  auto verified = channel->verify(inbound);
  if (auto* rejection = std::get_if<channels::Rejection>(&verified)) {
    if (rejection->reason == channels::RejectReason::unhandled_event) {
      // Authentic, but about nothing SeatFlow keeps: acknowledged so the gateway stops sending it.
      probe.count(channel->id(), domain::CallbackResult::ignored);
      return HttpResponse{
          200, std::string(channel->content_type()), std::string(channel->ack_body()), {}};
    }
    // Nothing is written for an unverified request, and nothing is logged but the throttled
    // clock_skew line of an authentic stale one: the counter is its trace.
    probe.count(channel->id(), callback_result(rejection->reason));
    if (rejection->reason == channels::RejectReason::stale) {
      probe.note_clock_skew(channel->id(), rejection->skew_ms);
    }
    return HttpResponse{http_status(rejection->reason),
                        std::string(channel->content_type()),
                        channel->failure_body(rejection->detail),
                        {}};
  }
  return std::move(std::get<domain::VerifiedCallback>(verified));
}

}  // namespace seatflow::http

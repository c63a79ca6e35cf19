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

channels::Result<domain::VerifiedCallback> check_notify(const channels::Registry& channels,
                                                        std::string_view channel_name,
                                                        const HttpRequest& request,
                                                        std::int64_t now_ms, HttpProbe& probe) {
  const auto* channel = channels.find(channel_name);
  if (channel == nullptr) {
    const auto code = channels::make_error_code(channels::errc::unknown_channel);
    return channels::Failure{code, code.message(), {}};
  }
  const channels::InboundRequest inbound{request.body, &request.headers, now_ms};
  auto verified = channel->verify(inbound);
  if (!verified.ok()) {
    // Nothing is written for an unverified request, and nothing is logged but the throttled
    // clock_skew line of an authentic stale one: the counter is its trace. An authentic event
    // about nothing SeatFlow keeps is counted ignored (and acknowledged).
    const auto reason = channels::errc_of(verified.error());
    probe.count(channel->id(), callback_result(reason));
    if (reason == channels::RejectReason::stale) {
      probe.note_clock_skew(channel->id(), channels::stale_skew_ms(verified.failure()));
    }
  }
  return verified;
}

HttpResponse notify_refusal(const channels::Channel* channel, const domain::Failure& refusal) {
  const int status = http_status(refusal.code);
  if (channel == nullptr) {
    return HttpResponse{status, "text/plain", refusal.detail, {}};
  }
  // An authentic event SeatFlow does not act on is acknowledged so the gateway stops sending it.
  return HttpResponse{
      status,
      std::string(channel->content_type()),
      is_ack(status) ? std::string(channel->ack_body()) : channel->failure_body(refusal.detail),
      {}};
}

}  // namespace seatflow::http

// Request routing and the pre-engine notify checks (verify first: no log, no write before it).
#include "http/routing.hpp"

#include "channels/hmac_query.hpp"
#include "channels/hmac_refund.hpp"
#include "http/status.hpp"

namespace seatflow::http {
namespace {

constexpr std::string_view kNotifyPrefix = "/api/payment/notify/";

}  // namespace

Route route_request(std::string_view method, std::string_view target) {
  Route route;
  route.path = target.substr(0, target.find('?'));
  const auto path = route.path;
  if (path.starts_with(kNotifyPrefix)) {
    route.kind = method == "POST" ? RouteKind::notify : RouteKind::method_not_allowed;
    route.channel = path.substr(kNotifyPrefix.size());
    return route;
  }
  if (path.starts_with(channels::kHmacQueryPath)) {
    route.kind = method == "GET" ? RouteKind::gateway_query : RouteKind::method_not_allowed;
    route.payment = path.substr(channels::kHmacQueryPath.size());
    return route;
  }
  if (path == channels::kHmacRefundPath) {
    route.kind = method == "POST" ? RouteKind::gateway_refund : RouteKind::method_not_allowed;
    return route;
  }
  if (path.starts_with("/api/")) {
    route.kind = RouteKind::orders_api;
    return route;
  }
  if (path == "/console" || path.starts_with("/console/")) {
    route.kind = method == "GET" ? RouteKind::console : RouteKind::method_not_allowed;
    return route;
  }
  const bool known = path == "/healthz" || path == "/readyz" || path == "/metrics";
  if (method != "GET") {
    route.kind = known ? RouteKind::method_not_allowed : RouteKind::not_found;
  } else if (path == "/healthz") {
    route.kind = RouteKind::healthz;
  } else if (path == "/readyz") {
    route.kind = RouteKind::readyz;
  } else if (path == "/metrics") {
    route.kind = RouteKind::metrics;
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
    // Nothing is logged or written for an unverified request: the counter is its only trace. An
    // authentic event about nothing SeatFlow keeps is counted ignored (and acknowledged).
    probe.count(channel->id(), callback_result(channels::errc_of(verified.error())));
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

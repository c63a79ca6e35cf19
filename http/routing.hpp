// Request routing and the notify checks that run before the engine sees a callback. Free of the
// actor system, so the HTTP fuzz target drives the same decisions the server's handler makes.
#pragma once

#include <cstdint>
#include <string_view>

#include "channels/registry.hpp"
#include "domain/types.hpp"
#include "http/probe.hpp"
#include "http/types.hpp"

namespace seatflow::http {

enum class RouteKind : std::uint8_t {
  notify,              // POST /api/payment/notify/<channel>
  orders_api,          // every other /api/ path (authenticated)
  healthz,             // GET /healthz
  readyz,              // GET /readyz
  metrics,             // GET /metrics
  console,             // GET /console and /console/<file>: the operations console's files
  method_not_allowed,  // 405
  not_found,           // 404
};

struct Route {
  RouteKind kind = RouteKind::not_found;
  std::string_view path;     // the target without its query
  std::string_view channel;  // the channel name of a notify route
  std::string_view allow;    // the path's methods, for the Allow header of a 405
};

// The Allow values of the engine's own routes (HEAD goes with every GET: RFC 9110 §9.3.2).
inline constexpr std::string_view kAllowGet = "GET, HEAD";
inline constexpr std::string_view kAllowPost = "POST";

// Where a request goes; the views point into `target`.
[[nodiscard]] Route route_request(std::string_view method, std::string_view target);

// The notify path up to the engine: the channel must be enabled and the request must verify.
// Nothing is logged for a refused request but the throttled clock-skew line of a stale one (its
// skew noted in `probe`); it is counted in `probe` and is a failure of
// channels::errc (unknown_channel, or the channel's rejection), answered with notify_refusal(). A
// verified callback is returned for the engine (not yet counted).
[[nodiscard]] channels::Result<domain::VerifiedCallback> check_notify(
    const channels::Registry& channels, std::string_view channel_name, const HttpRequest& request,
    std::int64_t now_ms, HttpProbe& probe);

// The answer to a notify check_notify refused: its status from the table in http/status.hpp, in
// the dialect of `channel` (its ACK for an authentic event SeatFlow does not act on), plain text
// when there is no such channel.
[[nodiscard]] HttpResponse notify_refusal(const channels::Channel* channel,
                                          const domain::Failure& refusal);

}  // namespace seatflow::http

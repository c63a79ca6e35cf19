// Registers the http probe's families and children once, at start-up.
#include "http/probe.hpp"

#include <string>

namespace seatflow::http {

HttpProbe::HttpProbe(observability::Registry& registry)
    : connections_refused_(
          registry
              .counter("seatflow_connections_refused_total",
                       "Connections refused at the connection limits (in all or from one source).")
              .Add({})),
      inflight_callbacks_(
          registry.gauge("seatflow_inflight_callbacks", "Verified callbacks awaiting their reply.")
              .Add({})),
      open_connections_(
          registry.gauge("seatflow_open_connections", "Open HTTP connections.").Add({})) {
  auto& callbacks = registry.counter("seatflow_payment_callback_total",
                                     "Payment callbacks by channel and result.");
  auto& latency = registry.histogram("seatflow_payment_callback_duration_seconds",
                                     "Verified callback to reply.");
  auto& rate_limited = registry.counter(
      "seatflow_http_rate_limited_total",
      "Notifies refused 429 unparsed: their source's unverified-traffic bucket was empty.");
  auto& source_refused =
      registry.counter("seatflow_http_source_refused_total",
                       "Notifies refused 403 unparsed: their source is not in the channel's "
                       "SEATFLOW_<CHANNEL>_ALLOWED_SOURCES.");
  for (std::size_t c = 0; c < domain::kChannelCount; ++c) {
    const std::string channel(domain::to_string(static_cast<domain::Channel>(c)));
    for (std::size_t r = 0; r < domain::kCallbackResultCount; ++r) {
      const std::string result(domain::to_string(static_cast<domain::CallbackResult>(r)));
      callbacks_[c][r] = &callbacks.Add({{"channel", channel}, {"result", result}});
    }
    rate_limited_[c] = &rate_limited.Add({{"channel", channel}});
    source_refused_[c] = &source_refused.Add({{"channel", channel}});
    latency_[c] = std::make_unique<observability::AtomicHistogram>(
        latency, prometheus::Labels{{"channel", channel}}, kLatencyBucketsSeconds);
  }
  hook_ = registry.on_scrape([this] {
    for (const auto& histogram : latency_) {
      histogram->sync();
    }
  });
}

void HttpProbe::set_live(std::size_t inflight_callbacks, std::size_t open_connections) {
  inflight_callbacks_.Set(static_cast<double>(inflight_callbacks));
  open_connections_.Set(static_cast<double>(open_connections));
}

std::uint64_t HttpProbe::callbacks(domain::Channel channel, domain::CallbackResult result) const {
  return static_cast<std::uint64_t>(
      callbacks_[index(channel)][static_cast<std::size_t>(result)]->Value());
}

}  // namespace seatflow::http

// Request routing and the notify flow: verify first (no log, no write before it), then the engine.
#include "http/handlers.hpp"

#include <cassert>

#include "domain/clock.hpp"
#include "http/console.hpp"
#include "http/routing.hpp"
#include "http/server.hpp"
#include "http/status.hpp"

namespace seatflow::http {
namespace {

HttpResponse text(int status, std::string body) {
  return {status, "text/plain", std::move(body), {}};
}

// The reply path of one verified callback. It answers exactly once: with the engine's outcome, or,
// when the engine drops the reply without calling it (a core actor died, a stop dropped the
// pending callbacks), with 503 from the destructor, so the gateway retries and an uncommitted
// callback is never left hanging nor ACKed. Shared by every copy of the engine's ReplyFn.
class CallbackAnswer {
 public:
  CallbackAnswer(const channels::Channel* channel, Respond respond, HttpProbe* probe,
                 std::shared_ptr<std::atomic<std::size_t>> inflight)
      : channel_(channel),
        respond_(std::move(respond)),
        probe_(probe),
        inflight_(std::move(inflight)),
        started_(std::chrono::steady_clock::now()) {}
  ~CallbackAnswer() { answer({domain::CallbackResult::unavailable, "dropped unanswered"}); }
  CallbackAnswer(const CallbackAnswer&) = delete;
  CallbackAnswer& operator=(const CallbackAnswer&) = delete;

  void answer(const domain::CallbackOutcome& outcome) {
    if (answered_.exchange(true)) {
      return;
    }
    inflight_->fetch_sub(1, std::memory_order_relaxed);
    probe_->count(channel_->id(), outcome.result);
    probe_->observe_latency(channel_->id(), std::chrono::duration_cast<std::chrono::microseconds>(
                                                std::chrono::steady_clock::now() - started_));
    respond_(callback_reply(*channel_, outcome));
  }

 private:
  const channels::Channel* channel_;
  Respond respond_;
  HttpProbe* probe_;
  std::shared_ptr<std::atomic<std::size_t>> inflight_;
  std::chrono::steady_clock::time_point started_;
  std::atomic<bool> answered_{false};
};

}  // namespace

std::shared_ptr<const domain::RawRequest> keep_raw(const channels::Channel& channel,
                                                   HttpRequest&& request) {
  auto raw = std::make_shared<domain::RawRequest>();
  raw->body = std::move(request.body);
  // Only the headers the channel reads: an Authorization header or anything else the sender put
  // on the request is never kept.
  for (const auto name : channel.read_headers()) {
    if (const auto it = request.headers.find(name); it != request.headers.end()) {
      raw->headers.emplace_back(it->first, it->second);
    }
  }
  return raw;
}

HttpResponse callback_reply(const channels::Channel& channel,
                            const domain::CallbackOutcome& outcome) {
  const int status = http_status(outcome.result);
  if (is_ack(status)) {
    return {200, std::string(channel.content_type()), std::string(channel.ack_body()), {}};
  }
  HttpResponse response{
      status,
      std::string(channel.content_type()),
      channel.failure_body(outcome.detail.empty() ? domain::to_string(outcome.result)
                                                  : outcome.detail),
      {}};
  if (status == 503) {
    response.headers.emplace_back("Retry-After", "1");
  }
  return response;
}

ApiHandler::ApiHandler(const HttpConfig& http, const ApiSettings& api, actors::Engine& engine,
                       const channels::Registry& channels, HttpProbe& probe,
                       observability::Registry& metrics, ExtraRoutes extra)
    : inflight_max_(http.inflight_callbacks_max),
      engine_(engine),
      orders_api_(api, http.inflight_api_max, engine, channels, extra),
      channels_(channels),
      probe_(probe),
      front_door_(http.front_door, probe),
      metrics_(metrics),
      extra_open_(std::move(extra.open)),
      inflight_(std::make_shared<std::atomic<std::size_t>>(0)) {}

void ApiHandler::handle(HttpRequest&& request, Respond respond) {
  front_door_.note_forwarded(request);
  const auto route = route_request(request.method, request.target);
  if (route.kind != RouteKind::notify && extra_open_ && extra_open_(request, route.path, respond)) {
    return;
  }
  switch (route.kind) {
    case RouteKind::notify:
      notify(route.channel, std::move(request), std::move(respond));
      return;
    case RouteKind::orders_api:
      orders_api_.handle(std::move(request), route.path, std::move(respond));
      return;
    case RouteKind::healthz:
      respond(text(200, "ok"));
      return;
    case RouteKind::readyz: {
      // The prober's cached verdict: answered at once whatever the stores do.
      const auto state = engine_.readiness();
      respond(state.ready ? text(200, "ready") : text(503, "not ready: " + state.reason));
      return;
    }
    case RouteKind::metrics:
      metrics(std::move(respond));
      return;
    case RouteKind::console: {
      auto asset = console_response(route.path);
      respond(asset ? std::move(*asset) : text(404, "not found"));
      return;
    }
    case RouteKind::method_not_allowed: {
      auto refusal = text(405, "method not allowed");
      refusal.headers.emplace_back("Allow", std::string(route.allow));
      respond(std::move(refusal));
      return;
    }
    case RouteKind::not_found:
      respond(text(404, "not found"));
      return;
  }
}

void ApiHandler::metrics(Respond respond) {
  // http's own live gauges; every other module's probe refreshes its own in a scrape hook.
  probe_.set_live(inflight_->load(std::memory_order_relaxed),
                  server_ != nullptr ? server_->open_connections() : 0);
  respond({200, observability::kMetricsContentType, metrics_.serialize(), {}});
}

void ApiHandler::notify(std::string_view channel_name, HttpRequest&& request, Respond respond) {
  // Before anything is parsed: the channel's allowlist (403) and the source's bucket (429).
  const auto* enabled = channels_.find(channel_name);
  const auto source = front_door_.source_of(request);
  if (enabled != nullptr) {
    if (auto refusal = front_door_.refusal(*enabled, source)) {
      respond(std::move(*refusal));
      return;
    }
  }
  auto checked = check_notify(channels_, channel_name, request, domain::unix_time_ms(), probe_);
  if (!checked.ok()) {
    auto refusal = notify_refusal(channels_.find(channel_name), checked.failure());
    if (checked.error().category() == channels::error_category() &&
        channels::spends_unverified_token(channels::errc_of(checked.error()))) {
      front_door_.spend(source);  // failed parsing or verification; never an authentic message
    }
    respond(std::move(refusal));
    return;
  }
  front_door_.verified(source);
  auto& verified = checked.value();
  const auto* channel = channels_.find(verified.channel);
  assert(channel != nullptr && "a verified callback names an enabled channel");
  if (inflight_->fetch_add(1, std::memory_order_relaxed) >= inflight_max_) {
    inflight_->fetch_sub(1, std::memory_order_relaxed);
    probe_.count(channel->id(), domain::CallbackResult::unavailable);
    respond(callback_reply(*channel, {domain::CallbackResult::unavailable, "overloaded"}));
    return;
  }
  // A copy of a committed callback is answered from memory before anything is kept for the
  // engine (raw request, reply path): a storm's copies cost a lookup (docs/BENCHMARKS.md).
  const auto started = std::chrono::steady_clock::now();
  if (engine_.answer_settled(verified)) {
    inflight_->fetch_sub(1, std::memory_order_relaxed);
    probe_.count(channel->id(), domain::CallbackResult::duplicate);
    probe_.observe_latency(channel->id(), std::chrono::duration_cast<std::chrono::microseconds>(
                                              std::chrono::steady_clock::now() - started));
    respond(callback_reply(*channel, {domain::CallbackResult::duplicate, {}}));
    return;
  }
  verified.raw = keep_raw(*channel, std::move(request));
  auto answer = std::make_shared<CallbackAnswer>(channel, std::move(respond), &probe_, inflight_);
  engine_.submit(std::move(verified),
                 [answer = std::move(answer)](const domain::CallbackOutcome& outcome) {
                   answer->answer(outcome);
                 });
}

}  // namespace seatflow::http

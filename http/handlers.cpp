// Request routing and the notify flow: verify first (no log, no write before it), then the engine.
#include "http/handlers.hpp"

#include "channels/hmac_channel.hpp"
#include "channels/hmac_refund.hpp"
#include "channels/query.hpp"

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
                       observability::Registry& metrics)
    : inflight_max_(http.inflight_callbacks_max),
      engine_(engine),
      orders_api_(api, http.inflight_api_max, engine, channels),
      channels_(channels),
      probe_(probe),
      metrics_(metrics),
      inflight_(std::make_shared<std::atomic<std::size_t>>(0)) {
  if (api.mock_gateway.enabled) {
    mock_secrets_ = api.mock_gateway.secrets;
    mock_window_ms_ = api.callback_window_ms;
  }
}

void ApiHandler::handle(HttpRequest&& request, Respond respond) {
  const auto route = route_request(request.method, request.target);
  switch (route.kind) {
    case RouteKind::notify:
      notify(route.channel, std::move(request), std::move(respond));
      return;
    case RouteKind::gateway_query:
      respond(mock_gateway_query(route.payment));
      return;
    case RouteKind::gateway_refund:
      respond(mock_gateway_refund(request));
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
    case RouteKind::method_not_allowed:
      respond(text(405, route.path.starts_with("/api/") ? "method not allowed" : "not found"));
      return;
    case RouteKind::not_found:
      respond(text(404, "not found"));
      return;
  }
}

HttpResponse ApiHandler::mock_gateway_query(std::string_view payment_no) const {
  // Only the dev mock gateway answers here; an engine with it off has no such endpoint.
  const auto& book = engine_.mock_book();
  const auto* hmac =
      dynamic_cast<const channels::HmacChannel*>(channels_.find(domain::Channel::hmac));
  if (!book || hmac == nullptr || payment_no.empty() ||
      payment_no.size() > channels::kHmacMaxIdBytes) {
    return text(404, "not found");
  }
  const std::string payment(payment_no);
  const auto status = book->status_of(payment);
  if (!status) {
    return text(202, "pending");
  }
  const auto state = *status == 1 ? channels::QueryState::paid : channels::QueryState::failed;
  const auto now_ms = domain::unix_time_ms();
  HttpResponse response = text(200, hmac->signed_body(channels::query_callback_id(payment, state),
                                                      payment, *status, now_ms));
  response.content_type = "application/json";
  return response;
}

HttpResponse ApiHandler::mock_gateway_refund(const HttpRequest& request) const {
  const auto& book = engine_.mock_book();
  if (!book || mock_secrets_.empty()) {
    return text(404, "not found");
  }
  auto read = channels::hmac_refund_read_request(request.body, mock_secrets_,
                                                 domain::unix_time_ms(), mock_window_ms_);
  if (!read.ok()) {
    return text(401, read.detail());
  }
  const auto& refund = read.value();
  // Idempotent by nature: the same refund number gets the same answer while the book holds.
  const bool paid = book->status_of(refund.payment_no) == std::optional<int>(1);
  HttpResponse response =
      text(200, channels::hmac_refund_answer_body(
                    mock_secrets_.front(), refund, paid,
                    paid ? "refunded by the mock gateway" : "not paid at the mock gateway",
                    domain::unix_time_ms()));
  response.content_type = "application/json";
  return response;
}

void ApiHandler::metrics(Respond respond) {
  // http's own live gauges; every other module's probe refreshes its own in a scrape hook.
  probe_.set_live(inflight_->load(std::memory_order_relaxed),
                  server_ != nullptr ? server_->open_connections() : 0);
  respond({200, observability::kMetricsContentType, metrics_.serialize(), {}});
}

void ApiHandler::notify(std::string_view channel_name, HttpRequest&& request, Respond respond) {
  auto checked = check_notify(channels_, channel_name, request, domain::unix_time_ms(), probe_);
  if (!checked.ok()) {
    respond(notify_refusal(channels_.find(channel_name), checked.failure()));
    return;
  }
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

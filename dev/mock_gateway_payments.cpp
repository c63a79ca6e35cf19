// The hmac gateway's payment API as the mock plays it (SPEC §16): a signed creation answered with
// the payment's pay URL, a signed close answered closed, paid or not_found, and a refusal signed
// as such. Each request is read, and its signature and timestamp checked, by the gateway's side of
// SeatFlow's own hmac payment dialect (channels/hmac/hmac_payment.hpp: the very contents and MAC
// the engine signs with) before the book is asked anything.
#include <utility>

#include "channels/hmac/hmac_payment.hpp"
#include "dev/log.hpp"
#include "dev/mock_gateway.hpp"
#include "domain/clock.hpp"
#include "net/message.hpp"

namespace seatflow::dev {
namespace {

// A request that was not read or did not verify: 400 malformed, 401 unsigned or stale. Unsigned:
// nothing proves which payment it is about.
http::HttpResponse unread(const channels::Failure& failure) {
  const bool malformed = channels::errc_of(failure.code) == channels::errc::malformed;
  return http::json_error(malformed ? 400 : 401, failure.detail);
}

http::HttpResponse signed_json(int status, std::string body) {
  return {status, "application/json", std::move(body), {}};
}

// A verified request the gateway refuses: `error` signed as a refusal of the payment.
http::HttpResponse refusal(const MockGatewaySettings& settings, int status,
                           std::string_view payment_no, std::string_view error) {
  return signed_json(status, channels::hmac_refusal_body(settings.secrets.front(), payment_no,
                                                         error, domain::unix_time_ms()));
}

// A creation's answer for what the book made of it: 200 signed with its pay URL, or the refusal.
http::HttpResponse create_answer(const MockGatewaySettings& settings, const std::string& payment_no,
                                 const MockCreateAnswer& answer) {
  switch (answer.outcome) {
    case MockCreateOutcome::created:
    case MockCreateOutcome::again:
      break;
    case MockCreateOutcome::conflict:
      return refusal(settings, 409, payment_no, "amount_mismatch");
    case MockCreateOutcome::closed:
      return refusal(settings, 409, payment_no, "closed");
    case MockCreateOutcome::expired:
      return refusal(settings, 409, payment_no, "expired");
    case MockCreateOutcome::full:
      return refusal(settings, 503, payment_no, "too_many_payments");
  }
  return signed_json(
      200, channels::hmac_create_answer_body(settings.secrets.front(), payment_no, answer.pay_url,
                                             domain::unix_time_ms()));
}

}  // namespace

void MockGateway::create(const http::HttpRequest& request, const std::vector<std::string>& /*args*/,
                         http::Respond& respond) const {
  if (settings_.secrets.empty()) {
    respond(http::json_error(404, "not found"));
    return;
  }
  auto read = channels::hmac_create_read_request(request.body, settings_.secrets,
                                                 domain::unix_time_ms(), settings_.window_ms);
  if (!read.ok()) {
    respond(unread(read.failure()));
    return;
  }
  const auto& fields = read.value();
  // The mock sends its callbacks there: it must be a URL it can reach.
  if (!net::parse_url(fields.notify_url).ok()) {
    respond(http::json_error(400, "notifyUrl is not an http(s) URL"));
    return;
  }
  auto url = pay_url(fields.payment_no);
  if (url.empty()) {
    respond(refusal(settings_, 503, fields.payment_no, "not_ready"));
    return;
  }
  const auto answer = settings_.book->create(
      fields.payment_no,
      {fields.amount_cents, settings_.keeps_deadline ? fields.expires_at_ms : 0, fields.notify_url,
       std::move(url), 0},
      domain::unix_time_ms());
  logger().info(
      "event=mock_gateway_create payment_no={} amount_cents={} expires_at_ms={} outcome={}",
      observability::quoted_value(fields.payment_no), fields.amount_cents, fields.expires_at_ms,
      to_string(answer.outcome));
  if (answer.outcome == MockCreateOutcome::created) {
    schedule_created(fields.payment_no);
  }
  respond(create_answer(settings_, fields.payment_no, answer));
}

void MockGateway::close(const http::HttpRequest& request, const std::vector<std::string>& /*args*/,
                        http::Respond& respond) const {
  if (settings_.secrets.empty()) {
    respond(http::json_error(404, "not found"));
    return;
  }
  auto read = channels::hmac_close_read_request(request.body, settings_.secrets,
                                                domain::unix_time_ms(), settings_.window_ms);
  if (!read.ok()) {
    respond(unread(read.failure()));
    return;
  }
  const auto& payment_no = read.value().payment_no;
  // The path's number as the dialect wrote it (form-encoded), which must be the body's.
  const auto target = std::string_view(request.target);
  if (channels::hmac_close_payment_no(target.substr(0, target.find('?'))) != payment_no) {
    respond(http::json_error(400, "paymentNo differs from the path's"));
    return;
  }
  const auto outcome = settings_.book->close(payment_no, domain::unix_time_ms());
  auto status = channels::HmacCloseStatus::closed;
  switch (outcome) {
    case MockCloseOutcome::closed:
      break;
    case MockCloseOutcome::paid:
      status = channels::HmacCloseStatus::paid;
      break;
    case MockCloseOutcome::not_found:
      status = channels::HmacCloseStatus::not_found;
      break;
    case MockCloseOutcome::full:
      respond(refusal(settings_, 503, payment_no, "too_many_payments"));
      return;
  }
  logger().info("event=mock_gateway_close payment_no={} status={}",
                observability::quoted_value(payment_no), channels::to_string(status));
  respond(signed_json(200, channels::hmac_close_answer_body(settings_.secrets.front(), payment_no,
                                                            status, domain::unix_time_ms())));
}

void MockGateway::schedule_created(const std::string& payment_no) const {
  // The automatic callback of the hmac dialect, when the mock sends them on it: the book decides
  // when it is due (closed, expired or settled by then: not sent).
  if (engine_ == nullptr || !settings_.auto_pay || settings_.channel != domain::Channel::hmac) {
    return;
  }
  (void)engine_->tell(handle(),
                      MockDelivery{payment_no, 1, settings_.delay_ms, 0, MockOrigin::created});
}

std::string MockGateway::pay_url(std::string_view payment_no) const {
  const std::lock_guard lock(base_mutex_);
  if (base_url_.empty()) {
    return {};
  }
  return base_url_ + checkout_path(payment_no);
}

}  // namespace seatflow::dev

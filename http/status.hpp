// The one table from what the lower layers decide to an HTTP status and ACK-or-not: a callback's
// result, a channel's rejection (channels::errc), a store's answer (persistence::errc and the
// success kinds of persistence::Done), a refund's, and the HTTP layer's own refusals (http::errc).
// Below http/ nothing knows an HTTP code; the callback log records the status of each logged
// callback through the function the engine is given at start
// (`callback_status`, see docs/ARCHITECTURE.md).
#pragma once

#include <system_error>

#include "actors/bill_runner.hpp"
#include "actors/discrepancy_refunder.hpp"
#include "channels/errc.hpp"
#include "domain/outcome.hpp"
#include "http/errc.hpp"
#include "persistence/drivers/errc.hpp"
#include "persistence/stores/order_store.hpp"

namespace seatflow::http {

inline constexpr int kAckStatus = 200;

// The status each callback result is answered with (200 ACK, 4xx permanent, 5xx transient).
[[nodiscard]] constexpr int http_status(domain::CallbackResult result) {
  switch (result) {
    case domain::CallbackResult::applied:
    case domain::CallbackResult::duplicate:
    case domain::CallbackResult::ignored:
    case domain::CallbackResult::discrepancy:
      return kAckStatus;
    case domain::CallbackResult::conflict:
      return 409;
    case domain::CallbackResult::rejected_signature:
    case domain::CallbackResult::stale:
      return 401;
    case domain::CallbackResult::rejected_param:
      return 400;
    case domain::CallbackResult::unknown_payment:
      return 404;
    case domain::CallbackResult::mark_sold_failed:
    case domain::CallbackResult::unavailable:
      return 503;
  }
  return 500;
}

// The same as a plain function pointer, the form the persistence layer is handed
// (persistence::StatusOf): it records the status in each callback's log row (SPEC §12).
[[nodiscard]] inline int callback_status(domain::CallbackResult result) {
  return http_status(result);
}

// A rejected request was never verified, so nothing was logged or written (SPEC §6 replies).
[[nodiscard]] constexpr int http_status(channels::errc reason) {
  switch (reason) {
    case channels::errc::success:
      return kAckStatus;
    case channels::errc::malformed:
    case channels::errc::bad_status:
    case channels::errc::unusable:
      return 400;
    case channels::errc::bad_signature:
    case channels::errc::stale:
      return 401;
    case channels::errc::unhandled_event:
      // Authentic, but an event SeatFlow does not act on: ACK so that the gateway stops.
      return kAckStatus;
    case channels::errc::unknown_channel:
      return 404;
    case channels::errc::rejected_answer:
      // A gateway's answer that proves nothing: the gateway, not the request, failed.
      return 502;
    case channels::errc::bad_config:
      // Start-up refuses it; a request never meets one.
      return 500;
  }
  // Unreachable for valid enumerators; an out-of-range value is a malformed request at worst.
  return 400;
}

// The result label a rejection is counted under (seatflow_payment_callback_total).
[[nodiscard]] constexpr domain::CallbackResult callback_result(channels::errc reason) {
  if (reason == channels::errc::unhandled_event) {
    return domain::CallbackResult::ignored;
  }
  if (reason == channels::errc::stale) {
    return domain::CallbackResult::stale;
  }
  return channels::is_signature_failure(reason) ? domain::CallbackResult::rejected_signature
                                                : domain::CallbackResult::rejected_param;
}

// A store's refusal: the state or the id is the client's problem, anything else is transient.
[[nodiscard]] constexpr int http_status(persistence::errc error) {
  switch (error) {
    case persistence::errc::success:
      return 200;
    case persistence::errc::not_found:
      return 404;
    case persistence::errc::conflict:
    case persistence::errc::already_exists:
      return 409;
    case persistence::errc::pg_unavailable:
    case persistence::errc::redis_unavailable:
    case persistence::errc::deadline_exceeded:
    case persistence::errc::commit_unknown:
      return 503;
    case persistence::errc::bad_setting:  // a start-up error; no request meets it
      return 500;
  }
  return 503;
}

// How a store call that did what was asked ended; its refusals are persistence::errc above.
[[nodiscard]] constexpr int http_status(persistence::Done done) {
  switch (done) {
    case persistence::Done::ok:
    case persistence::Done::already:
      return 200;
    case persistence::Done::created:
      return 201;
  }
  return 200;
}

// A request the HTTP layer refused before any work.
[[nodiscard]] constexpr int http_status(http::errc error) {
  switch (error) {
    case http::errc::success:
      return 200;
    case http::errc::bad_request:
      return 400;
    case http::errc::missing_credentials:
    case http::errc::bad_credentials:
    case http::errc::api_disabled:
      return 401;
  }
  return 400;
}

[[nodiscard]] constexpr int http_status(actors::RefundStatus status) {
  switch (status) {
    case actors::RefundStatus::refunded:
      return 200;
    case actors::RefundStatus::not_found:
      return http_status(persistence::errc::not_found);
    case actors::RefundStatus::conflict:
      return http_status(persistence::errc::conflict);
    case actors::RefundStatus::gateway_failed:
      return 502;
    case actors::RefundStatus::unavailable:
      return 503;
  }
  return 503;
}

// How a bill run's opening ended (POST /api/bill-runs, SPEC §13): 202 with the run once it is
// opened; 409 when the channel has no bill source or another run of it is running.
[[nodiscard]] constexpr int http_status(actors::BillEnd end) {
  switch (end) {
    case actors::BillEnd::done:
      return 202;
    case actors::BillEnd::refused:
    case actors::BillEnd::no_channel:
      return http_status(persistence::errc::conflict);
    case actors::BillEnd::not_ready:
    case actors::BillEnd::failed:
    case actors::BillEnd::store_error:
      return 503;
  }
  return 503;
}

// Any error code of the three categories above; an unknown category is a transient failure.
[[nodiscard]] inline int http_status(std::error_code code) {
  if (code.category() == http::error_category()) {
    return http_status(static_cast<http::errc>(code.value()));
  }
  if (code.category() == channels::error_category()) {
    return http_status(static_cast<channels::errc>(code.value()));
  }
  if (code.category() == persistence::error_category()) {
    return http_status(static_cast<persistence::errc>(code.value()));
  }
  return code ? 503 : 200;
}

[[nodiscard]] constexpr bool is_ack(int status) {
  return status == kAckStatus;
}

}  // namespace seatflow::http

// One discrepancy refund: the attempt row, the dialect's signed request under the client's
// deadlines, the verified answer, the outcome stored, the discrepancy answered.
#include "actors/discrepancy_refunder.hpp"

#include <cassert>
#include <chrono>
#include <stdexcept>

#include "actors/log.hpp"
#include "domain/clock.hpp"

namespace seatflow::actors {
namespace {

// What the gateway is told; ASCII (see channels::bounded_reason).
std::string gateway_reason(const std::string& kind) {
  return kind == "paid_after_refund" ? "paid after the order was refunded"
                                     : "paid after the order was cancelled";
}

// Why a refund could not begin: unknown, refused by its state (its kind or channel, resolved
// already, in flight), or the store failed.
RefundStatus status_of(std::error_code refusal) {
  if (refusal == persistence::errc::not_found) {
    return RefundStatus::not_found;
  }
  return refusal == persistence::errc::conflict ? RefundStatus::conflict
                                                : RefundStatus::unavailable;
}

}  // namespace

DiscrepancyRefunder::DiscrepancyRefunder(
    const std::vector<std::shared_ptr<const channels::RefundDialect>>& dialects,
    std::unique_ptr<net::HttpClient> client, observability::Registry& metrics)
    : client_(std::move(client)), probe_(metrics) {
  assert(client_ != nullptr);
  for (const auto& dialect : dialects) {
    dialects_[static_cast<std::size_t>(dialect->channel())] = dialect;
  }
}

std::uint32_t DiscrepancyRefunder::lease_ms() const {
  return client_->limits().total_timeout_ms + kRefundLeaseMarginMs;
}

std::string DiscrepancyRefunder::channel_refusal(domain::Channel channel) const {
  if (channel == domain::Channel::standard) {
    return "standard payments cannot be refunded through SeatFlow: refund them at the gateway";
  }
  if (!dialects_[static_cast<std::size_t>(channel)]) {
    return "no refund gateway is configured for channel " + std::string(domain::to_string(channel));
  }
  return {};
}

DiscrepancyRefunder::Claim DiscrepancyRefunder::claim(std::int64_t discrepancy_id) {
  const std::lock_guard lock(claims_mutex_);
  if (claims_.count(discrepancy_id) != 0) {
    return Claim::in_flight;
  }
  if (claims_.size() >= kRefundsInFlightMax) {
    return Claim::overloaded;
  }
  claims_.insert(discrepancy_id);
  return Claim::taken;
}

void DiscrepancyRefunder::release(std::int64_t discrepancy_id) {
  const std::lock_guard lock(claims_mutex_);
  const auto erased = claims_.erase(discrepancy_id);
  assert(erased == 1 && "a release pairs with a taken claim");
  (void)erased;
}

DiscrepancyRefunder::Call DiscrepancyRefunder::call(
    const channels::RefundDialect& dialect, const persistence::RefundAttempt& attempt) const {
  const channels::RefundTarget target{attempt.payment_no, attempt.refund_no, attempt.amount_cents,
                                      gateway_reason(attempt.kind), attempt.trade_no};
  auto request = [&]() -> channels::Result<net::Request> {
    try {
      return dialect.refund_request(target, domain::unix_time_ms());
    } catch (const std::exception&) {
      // OpenSSL could not sign (resources, a key that cannot sign): a fault of the process.
      return channels::reject(channels::errc::bad_config, "the request could not be signed");
    }
  }();
  if (!request.ok()) {
    // The dialect's own words (e.g. no PaymentIntent known for a Stripe payment); never a key.
    return {RefundCallResult::rejected, "the request could not be made: " + request.detail(), {}};
  }
  const auto response = client_->send(request.value());
  if (!response.ok()) {
    return {RefundCallResult::unreachable, "gateway unreachable: " + response.detail(), {}};
  }
  const auto result = dialect.refund_answer(target, response.value(), domain::unix_time_ms());
  if (!result.ok()) {
    return {RefundCallResult::rejected, "gateway answer not accepted: " + result.detail(), {}};
  }
  const auto& answer = result.value();
  if (answer.state == channels::RefundState::succeeded) {
    return {RefundCallResult::succeeded, answer.reason, answer.gateway_refund_no};
  }
  return {RefundCallResult::refused, "gateway refused: " + answer.reason, {}};
}

RefundRun DiscrepancyRefunder::answer(persistence::RefundStore& store, std::int64_t discrepancy_id,
                                      RefundStatus status, std::string detail,
                                      const Call* call) const {
  RefundRun run{status, std::move(detail), std::nullopt, std::nullopt};
  if (call == nullptr) {
    return run;
  }
  run.outcome = RefundOutcome{call->result == RefundCallResult::succeeded ? "succeeded" : "failed",
                              call->reason};
  // The stored refund (as the list shows it) with this call's outcome.
  if (auto read = store.discrepancy(discrepancy_id); read.ok()) {
    run.discrepancy = std::move(read).value();
  }
  if (run.discrepancy && run.discrepancy->refund) {
    run.discrepancy->refund->status = run.outcome->status;
    run.discrepancy->refund->reason = run.outcome->reason;
  }
  return run;
}

RefundRun DiscrepancyRefunder::run(persistence::RefundStore& store, std::int64_t discrepancy_id) {
  const auto begun = store.begin(discrepancy_id, lease_ms(), [this](domain::Channel channel) {
    return channel_refusal(channel);
  });
  if (!begun.ok()) {
    return answer(store, discrepancy_id, status_of(begun.error()), begun.detail(), nullptr);
  }
  const auto& attempt = begun.value();
  const auto& dialect = dialects_[static_cast<std::size_t>(attempt.channel)];
  assert(dialect != nullptr && "begin() refuses a channel without a dialect");
  const auto outcome = call(*dialect, attempt);
  probe_.count(attempt.channel, outcome.result);
  logger().info(
      "event=discrepancy_refund discrepancy_id={} payment_no={} channel={} refund_no={} "
      "attempt={} result={} reason={}",
      discrepancy_id, quoted_value(attempt.payment_no), domain::to_string(attempt.channel),
      quoted_value(attempt.refund_no), attempt.attempts, to_string(outcome.result),
      quoted_value(outcome.reason));
  if (outcome.result == RefundCallResult::succeeded) {
    if (!store.succeed(attempt, outcome.reason, outcome.gateway_refund_no).ok()) {
      // The row stays pending: after its lease a retry asks again under the same number, and the
      // gateway answers the refund it already made.
      return answer(store, discrepancy_id, RefundStatus::unavailable,
                    "refunded at the gateway, but the outcome could not be stored: retry later",
                    nullptr);
    }
    return answer(store, discrepancy_id, RefundStatus::refunded, {}, &outcome);
  }
  if (!store.fail(attempt, outcome.reason).ok()) {
    return answer(store, discrepancy_id, RefundStatus::unavailable, "storage unavailable", nullptr);
  }
  return answer(store, discrepancy_id, RefundStatus::gateway_failed, outcome.reason, &outcome);
}

}  // namespace seatflow::actors

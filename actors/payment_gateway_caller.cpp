// One create or close at a payment's gateway: the dialect's signed request, the outbound client's
// deadlines, the verified answer; a close asks the gateway about the payment first.
#include "actors/payment_gateway_caller.hpp"

#include <nlohmann/json.hpp>

#include "actors/log.hpp"
#include "domain/assert.hpp"
#include "domain/clock.hpp"

namespace seatflow::actors {
namespace {

using GatewayRow = std::array<prometheus::Counter*, kGatewayResultCount>;

std::array<GatewayRow, domain::kChannelCount> gateway_counters(
    prometheus::Family<prometheus::Counter>& family) {
  std::array<GatewayRow, domain::kChannelCount> rows{};
  for (std::size_t c = 0; c < domain::kChannelCount; ++c) {
    const std::string channel(domain::to_string(static_cast<domain::Channel>(c)));
    for (std::size_t r = 0; r < kGatewayResultCount; ++r) {
      rows[c][r] = &family.Add({{"channel", channel},
                                {"result", std::string(to_string(static_cast<GatewayResult>(r)))}});
    }
  }
  return rows;
}

std::size_t gateway_index(domain::Channel channel) {
  return static_cast<std::size_t>(channel);
}
std::size_t gateway_index(GatewayResult result) {
  return static_cast<std::size_t>(result);
}

// A failed exchange or answer as a run: unreachable (no answer) or rejected (did not verify).
template <class T>
GatewayRun failed_run(const domain::Result<T>& failure, GatewayResult result) {
  return {result, failure.detail(), {}, {}};
}

void log_run(std::string_view call, domain::Channel channel, const std::string& payment_no,
             const GatewayRun& run) {
  if (run.result == GatewayResult::ok || run.result == GatewayResult::paid) {
    logger().info("event=gateway_{} payment_no={} channel={} result={}", call,
                  quoted_value(payment_no), domain::to_string(channel), to_string(run.result));
  } else {
    logger().warn("event=gateway_{}_failed payment_no={} channel={} result={} detail={}", call,
                  quoted_value(payment_no), domain::to_string(channel), to_string(run.result),
                  quoted_value(run.detail));
  }
}

}  // namespace

GatewayProbe::GatewayProbe(observability::Registry& registry)
    : creates_(gateway_counters(
          registry.counter("seatflow_gateway_create_total",
                           "Payments created at their gateway (SPEC §16) by channel and result."))),
      closes_(gateway_counters(
          registry.counter("seatflow_gateway_close_total",
                           "Payments closed at their gateway (SPEC §16) by channel and result."))) {
  auto& family = registry.counter(
      "seatflow_gateway_close_unconfirmed_total",
      "Orders the sweeper cancelled after the close grace without the gateway's confirmation.");
  for (std::size_t c = 0; c < domain::kChannelCount; ++c) {
    unconfirmed_[c] =
        &family.Add({{"channel", std::string(domain::to_string(static_cast<domain::Channel>(c)))}});
  }
}

void GatewayProbe::created(domain::Channel channel, GatewayResult result) {
  creates_[gateway_index(channel)][gateway_index(result)]->Increment();
}

void GatewayProbe::closed(domain::Channel channel, GatewayResult result) {
  closes_[gateway_index(channel)][gateway_index(result)]->Increment();
}

void GatewayProbe::close_unconfirmed(domain::Channel channel) {
  unconfirmed_[gateway_index(channel)]->Increment();
}

std::uint64_t GatewayProbe::creates(domain::Channel channel, GatewayResult result) const {
  return static_cast<std::uint64_t>(
      creates_[gateway_index(channel)][gateway_index(result)]->Value());
}

std::uint64_t GatewayProbe::closes(domain::Channel channel, GatewayResult result) const {
  return static_cast<std::uint64_t>(
      closes_[gateway_index(channel)][gateway_index(result)]->Value());
}

std::string pay_json(const channels::CreateAnswer& answer) {
  nlohmann::json pay = {{"kind", channels::to_string(answer.kind)}};
  pay[answer.field] = answer.value;
  return pay.dump();
}

PaymentGatewayCaller::PaymentGatewayCaller(
    const std::vector<std::shared_ptr<const channels::PaymentGatewayDialect>>& dialects,
    std::unique_ptr<net::HttpClient> client, std::shared_ptr<PaymentQuerier> querier,
    observability::Registry& metrics)
    : client_(std::move(client)), querier_(std::move(querier)), probe_(metrics) {
  for (const auto& dialect : dialects) {
    dialects_[gateway_index(dialect->channel())] = dialect;
  }
}

bool PaymentGatewayCaller::has_dialect(domain::Channel channel) const {
  return dialects_[gateway_index(channel)] != nullptr;
}

GatewayRun PaymentGatewayCaller::create(domain::Channel channel,
                                        const channels::CreateTarget& target) {
  const auto& dialect = dialects_[gateway_index(channel)];
  SEATFLOW_ASSERT(dialect != nullptr);
  const auto run = [&]() -> GatewayRun {
    const auto request = dialect->create_request(target, domain::unix_time_ms());
    if (!request.ok()) {
      return failed_run(request, GatewayResult::refused);
    }
    const auto response = client_->send(request.value());
    if (!response.ok()) {
      return failed_run(response, GatewayResult::unreachable);
    }
    const auto answer = dialect->create_answer(target, response.value(), domain::unix_time_ms());
    if (!answer.ok()) {
      return failed_run(answer, GatewayResult::rejected);
    }
    if (!answer.value().created) {
      return {GatewayResult::refused, "the gateway refused: " + answer.value().reason, {}, {}};
    }
    return {GatewayResult::ok, {}, pay_json(answer.value()), answer.value().gateway_ref};
  }();
  probe_.created(channel, run.result);
  log_run("create", channel, target.payment_no, run);
  return run;
}

GatewayRun PaymentGatewayCaller::close_call(const channels::PaymentGatewayDialect& dialect,
                                            const channels::CloseTarget& target) {
  if (!dialect.close_needs_call(target)) {
    return {GatewayResult::ok, {}, {}, {}};
  }
  const auto request = dialect.close_request(target, domain::unix_time_ms());
  if (!request.ok()) {
    return failed_run(request, GatewayResult::refused);
  }
  const auto response = client_->send(request.value());
  if (!response.ok()) {
    return failed_run(response, GatewayResult::unreachable);
  }
  const auto answer = dialect.close_answer(target, response.value(), domain::unix_time_ms());
  if (!answer.ok()) {
    return failed_run(answer, GatewayResult::rejected);
  }
  switch (answer.value().state) {
    case channels::CloseState::closed:
      return {GatewayResult::ok, {}, {}, {}};
    case channels::CloseState::paid:
      return {GatewayResult::paid, "the gateway says it is paid", {}, {}};
    case channels::CloseState::refused:
      break;
  }
  return {GatewayResult::refused, "the gateway refused: " + answer.value().reason, {}, {}};
}

GatewayRun PaymentGatewayCaller::close(const persistence::GatewaySubject& subject) {
  const auto channel = subject.payment.channel;
  const auto& dialect = dialects_[gateway_index(channel)];
  SEATFLOW_ASSERT(dialect != nullptr);
  const bool asks = querier_ && querier_->has_dialect(channel);
  channels::CloseTarget target{subject.payment.payment_no, subject.gateway_ref};
  if (asks) {
    const auto query = querier_->run(subject.payment, true);
    if (query.result == QueryResult::paid) {
      const GatewayRun run{GatewayResult::paid, "the query found it paid", {}, {}};
      probe_.closed(channel, run.result);
      log_run("close", channel, target.payment_no, run);
      return run;
    }
    if (target.gateway_ref.empty()) {
      target.gateway_ref = query.trade_no;  // Stripe: the intent the search found
    }
  }
  auto run = close_call(*dialect, target);
  if (run.result == GatewayResult::paid && asks) {
    // Applied through the pipeline like any query answer; the run stays `paid` either way: the
    // gateway said so, and nothing here may cancel it.
    (void)querier_->run(subject.payment, true);
  }
  probe_.closed(channel, run.result);
  log_run("close", channel, target.payment_no, run);
  return run;
}

}  // namespace seatflow::actors

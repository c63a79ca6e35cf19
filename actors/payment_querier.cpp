// One query: the dialect's signed request, the outbound client's deadlines, the verified answer,
// and for paid/failed the callback through Engine::submit.
#include "actors/payment_querier.hpp"

#include <future>

#include "actors/log.hpp"
#include "domain/clock.hpp"

namespace seatflow::actors {
namespace {

QueryResult result_of(channels::QueryState state) {
  switch (state) {
    case channels::QueryState::paid:
      return QueryResult::paid;
    case channels::QueryState::failed:
      return QueryResult::failed;
    case channels::QueryState::pending:
      return QueryResult::pending;
    case channels::QueryState::not_found:
      return QueryResult::not_found;
  }
  return QueryResult::pending;
}

}  // namespace

QueryProbe::QueryProbe(observability::Registry& registry)
    : latency_(registry
                   .histogram("seatflow_payment_query_duration_seconds",
                              "Gateway query, request to verified answer.")
                   .Add({}, prometheus::Histogram::BucketBoundaries(kBucketsSeconds.begin(),
                                                                    kBucketsSeconds.end()))) {
  auto& family = registry.counter("seatflow_payment_query_total",
                                  "Active queries of a payment's gateway by channel and result.");
  for (std::size_t c = 0; c < domain::kChannelCount; ++c) {
    const std::string channel(domain::to_string(static_cast<domain::Channel>(c)));
    for (std::size_t r = 0; r < kQueryResultCount; ++r) {
      queries_[c][r] = &family.Add(
          {{"channel", channel}, {"result", std::string(to_string(static_cast<QueryResult>(r)))}});
    }
  }
}

void QueryProbe::count(domain::Channel channel, QueryResult result,
                       std::chrono::microseconds latency) {
  queries_[static_cast<std::size_t>(channel)][static_cast<std::size_t>(result)]->Increment();
  latency_.Observe(static_cast<double>(latency.count()) / 1e6);
}

std::uint64_t QueryProbe::queries(domain::Channel channel, QueryResult result) const {
  return static_cast<std::uint64_t>(
      queries_[static_cast<std::size_t>(channel)][static_cast<std::size_t>(result)]->Value());
}

PaymentQuerier::PaymentQuerier(
    const std::vector<std::shared_ptr<const channels::QueryDialect>>& dialects,
    std::unique_ptr<net::HttpClient> client, Submit submit, std::chrono::milliseconds apply_timeout,
    observability::Registry& metrics)
    : client_(std::move(client)),
      submit_(std::move(submit)),
      apply_timeout_(apply_timeout),
      probe_(metrics) {
  for (const auto& dialect : dialects) {
    dialects_[static_cast<std::size_t>(dialect->channel())] = dialect;
  }
}

bool PaymentQuerier::has_dialect(domain::Channel channel) const {
  return dialects_[static_cast<std::size_t>(channel)] != nullptr;
}

QueryRun PaymentQuerier::run(const persistence::DueQuery& payment, bool wait) {
  const auto& dialect = dialects_[static_cast<std::size_t>(payment.channel)];
  if (!dialect) {
    return {QueryResult::no_channel, "no query dialect for the channel", {}};
  }
  const channels::QueryTarget target{payment.payment_no, payment.amount_cents};
  const auto start = std::chrono::steady_clock::now();
  const auto response = client_->send(dialect->request(target, domain::unix_time_ms()));
  QueryRun run;
  if (!response.ok()) {
    run = {QueryResult::unreachable, response.detail(), {}};
  } else {
    const auto answer = dialect->answer(target, response.value(), domain::unix_time_ms());
    if (!answer.ok()) {
      run = {QueryResult::rejected, answer.detail(), {}};
    } else {
      run.result = result_of(answer.value().state);
      run.trade_no = answer.value().trade_no;
      if (auto callback = channels::callback_of(target, payment.channel, answer.value())) {
        auto promise = std::make_shared<std::promise<domain::CallbackOutcome>>();
        auto future = promise->get_future();
        submit_(std::move(*callback),
                [promise](const domain::CallbackOutcome& outcome) { promise->set_value(outcome); });
        if (wait) {
          if (future.wait_for(apply_timeout_) == std::future_status::ready) {
            run.outcome = future.get();
          } else {
            run.outcome = domain::CallbackOutcome{domain::CallbackResult::unavailable,
                                                  "the pipeline did not answer in time"};
          }
        }
      }
    }
  }
  const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start);
  probe_.count(payment.channel, run.result, latency);
  if (run.result == QueryResult::rejected || run.result == QueryResult::unreachable) {
    logger().warn("event=payment_query_failed payment_no={} channel={} result={} detail={}",
                  quoted_value(payment.payment_no), domain::to_string(payment.channel),
                  to_string(run.result), quoted_value(run.detail));
  } else {
    logger().info(
        "event=payment_query payment_no={} channel={} result={}{}",
        quoted_value(payment.payment_no), domain::to_string(payment.channel), to_string(run.result),
        run.outcome ? std::string(" outcome=") + std::string(domain::to_string(run.outcome->result))
                    : std::string());
  }
  return run;
}

}  // namespace seatflow::actors

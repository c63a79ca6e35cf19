// Discrepancies (SPEC §12): the list, resolving one, and refunding one through its gateway.
#include <charconv>

#include "http/api_json.hpp"
#include "http/api_routes.hpp"
#include "http/status.hpp"

namespace seatflow::http {
namespace {

// A refund's answer when the gateway was asked (200, 502): the discrepancy as the list shows it,
// its refund this call's outcome, and on 502 the error. When the discrepancy (or its refund)
// could not be read back, the refund is the outcome alone, with an empty refundNo.
nlohmann::json refund_body(const actors::RefundRun& run) {
  auto body = run.discrepancy ? to_json(*run.discrepancy) : nlohmann::json::object();
  if (!run.discrepancy || !run.discrepancy->refund) {
    body["refund"] = {
        {"status", run.outcome->status}, {"reason", run.outcome->reason}, {"refundNo", ""}};
  }
  if (run.status != actors::RefundStatus::refunded) {
    body["error"] = run.detail;
  }
  return body;
}

}  // namespace

Result<void> OrdersApi::list_discrepancies(const ApiCall& call, Respond& respond) {
  const bool open_only = query_value(call.query, "open") != "false";
  std::size_t limit = discrepancy_page_default;
  if (const auto text = query_value(call.query, "limit"); !text.empty()) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
    if (ec != std::errc{} || ptr != text.data() + text.size() || limit == 0 ||
        limit > discrepancy_page_max) {
      return bad_request(
          "limit must be a whole number from 1 to " + std::to_string(discrepancy_page_max),
          "limit");
    }
  }
  dispatch(std::move(respond), [open_only, limit](auto& store, const Respond& reply) {
    reply(from_store(store.list_discrepancies(open_only, limit)));
  });
  return {};
}

Result<void> OrdersApi::resolve_discrepancy(const ApiCall& call, Respond& respond) {
  const auto id = discrepancy_id(call.args.at(0));
  if (!id.ok()) {
    return std::move(id).failure();
  }
  dispatch(std::move(respond), [id = id.value()](auto& store, const Respond& reply) {
    reply(from_store(store.resolve_discrepancy(id)));
  });
  return {};
}

Result<void> OrdersApi::refund_discrepancy(const ApiCall& call, Respond& respond) {
  const auto id = discrepancy_id(call.args.at(0));
  if (!id.ok()) {
    return std::move(id).failure();
  }
  // A refund holds the refund actor for one gateway call: it shares the API's in-flight bound.
  if (!take_slot(respond)) {
    return {};
  }
  engine_.refund_discrepancy(
      {id.value()},
      [respond, inflight = inflight_](const actors::RefundRun& run) {
        inflight->fetch_sub(1, std::memory_order_relaxed);
        const int status = http_status(run.status);
        if (run.outcome) {
          respond(json_response(status, refund_body(run)));
          return;
        }
        respond(json_error(status, run.detail));
      },
      unanswered(respond));
  return {};
}

}  // namespace seatflow::http

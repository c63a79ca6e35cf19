// Orders and payments (SPEC §7, §10): validate here, do the store work on an API actor, answer the
// store's result through the status table.
#include <utility>

#include "http/api_routes.hpp"
#include "http/status.hpp"

namespace seatflow::http {

using nlohmann::json;

Result<void> OrdersApi::create_order(const ApiCall& call, Respond& respond) {
  auto body = parse_body(call.request);
  if (!body.ok()) {
    return std::move(body).failure();
  }
  auto order = parse_order(body.value(), settings_.order_timeout_ms);
  if (!order.ok()) {
    return std::move(order).failure();
  }
  dispatch(std::move(respond),
           [order = std::move(order).value()](auto& store, const Respond& reply) {
             reply(from_store(store.create_order(order)));
           });
  return {};
}

Result<void> OrdersApi::get_order(const ApiCall& call, Respond& respond) {
  auto order_no = path_id(call.args.at(0), "orderNo");
  if (!order_no.ok()) {
    return std::move(order_no).failure();
  }
  dispatch(std::move(respond),
           [order_no = std::move(order_no).value()](auto& store, const Respond& reply) {
             reply(from_store(store.get_order(order_no)));
           });
  return {};
}

Result<void> OrdersApi::create_payment(const ApiCall& call, Respond& respond) {
  const auto parsed = parse_body(call.request);
  if (!parsed.ok()) {
    return std::move(parsed).failure();
  }
  const auto& body = parsed.value();
  persistence::NewPayment payment;
  for (auto [field, out, required] : {std::tuple{"orderNo", &payment.order_no, true},
                                      std::tuple{"paymentNo", &payment.payment_no, false}}) {
    auto value = id_field(body, field, required);
    if (!value.ok()) {
      return std::move(value).failure();
    }
    *out = std::move(value).value();
  }
  payment.channel = body.value("channel", json()).is_string() ? body["channel"].get<std::string>()
                                                              : std::string();
  if (!domain::parse_channel(payment.channel)) {
    return bad_request("channel must be hmac, alipay, wechat, stripe or standard", "channel");
  }
  dispatch(std::move(respond), [this, payment](auto& store, const Respond& reply) {
    const auto result = store.create_payment(payment);
    // Only after the commit: whatever it starts (the dev mock gateway's callback) must never reach
    // the engine before the payment is visible.
    if (result.ok() && result.value().done == persistence::Done::created && payment_created_) {
      payment_created_(result.value().row);
    }
    reply(from_store(result));
  });
  return {};
}

Result<void> OrdersApi::get_payment(const ApiCall& call, Respond& respond) {
  auto payment_no = path_id(call.args.at(0), "paymentNo");
  if (!payment_no.ok()) {
    return std::move(payment_no).failure();
  }
  dispatch(std::move(respond),
           [payment_no = std::move(payment_no).value()](auto& store, const Respond& reply) {
             reply(from_store(store.get_payment(payment_no)));
           });
  return {};
}

Result<void> OrdersApi::close_payment(const ApiCall& call, Respond& respond) {
  auto payment_no = path_id(call.args.at(0), "paymentNo");
  if (!payment_no.ok()) {
    return std::move(payment_no).failure();
  }
  dispatch(std::move(respond),
           [payment_no = std::move(payment_no).value()](auto& store, const Respond& reply) {
             reply(from_store(store.close_payment(payment_no)));
           });
  return {};
}

Result<void> OrdersApi::refund_payment(const ApiCall& call, Respond& respond) {
  auto payment_no = path_id(call.args.at(0), "paymentNo");
  if (!payment_no.ok()) {
    return std::move(payment_no).failure();
  }
  dispatch(std::move(respond),
           [payment_no = std::move(payment_no).value()](auto& store, const Respond& reply) {
             reply(from_store(store.refund_payment(payment_no)));
           });
  return {};
}

Result<void> OrdersApi::sync_payment(const ApiCall& call, Respond& respond) {
  // A sync holds the query actor for one gateway call: it shares the API's in-flight bound.
  const auto checked = path_id(call.args.at(0), "paymentNo");
  if (!checked.ok()) {
    return checked.failure();
  }
  if (!take_slot(respond)) {
    return {};
  }
  const auto& payment_no = checked.value();
  engine_.sync_payment(
      {payment_no},
      [this, payment_no, respond, inflight = inflight_](bool known, const actors::QueryRun& run) {
        inflight->fetch_sub(1, std::memory_order_relaxed);
        if (!known) {
          respond(json_error(http_status(persistence::errc::not_found), "unknown payment"));
          return;
        }
        json query = {{"result", actors::to_string(run.result)}};
        if (!run.detail.empty()) {
          query["detail"] = run.detail;
        }
        if (run.outcome) {
          query["outcome"] = domain::to_string(run.outcome->result);
        }
        // The payment as it is after the answer was applied.
        dispatch(respond, [payment_no, query](auto& store, const Respond& reply) {
          const auto payment = store.get_payment(payment_no);
          auto body = store_body(payment);
          body["query"] = query;
          reply(json_response(store_status(payment), body));
        });
      },
      unanswered(respond));
  return {};
}

}  // namespace seatflow::http

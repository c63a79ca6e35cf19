// Orders and payments (SPEC §7, §10): validate here, do the store work on an API actor, answer the
// store's result through the status table.
#include <utility>

#include "http/api_routes.hpp"
#include "http/status.hpp"

namespace seatflow::http {

using nlohmann::json;

std::optional<ApiError> OrdersApi::create_order(const ApiCall& call, Respond& respond) {
  auto body = parse_body(call.request);
  if (const auto* error = error_of(body)) {
    return *error;
  }
  auto order = parse_order(std::get<json>(body), settings_.order_timeout_ms);
  if (const auto* error = error_of(order)) {
    return *error;
  }
  dispatch(std::move(respond), [order = std::get<persistence::NewOrder>(std::move(order))](
                                   auto& store, const Respond& reply) {
    reply(from_store(store.create_order(order)));
  });
  return std::nullopt;
}

std::optional<ApiError> OrdersApi::get_order(const ApiCall& call, Respond& respond) {
  dispatch(std::move(respond), [order_no = call.args.at(0)](auto& store, const Respond& reply) {
    reply(from_store(store.get_order(order_no)));
  });
  return std::nullopt;
}

std::optional<ApiError> OrdersApi::create_payment(const ApiCall& call, Respond& respond) {
  const auto parsed = parse_body(call.request);
  if (const auto* error = error_of(parsed)) {
    return *error;
  }
  const auto& body = std::get<json>(parsed);
  persistence::NewPayment payment;
  for (auto [field, out, required] : {std::tuple{"orderNo", &payment.order_no, true},
                                      std::tuple{"paymentNo", &payment.payment_no, false}}) {
    auto value = id_field(body, field, required);
    if (const auto* error = error_of(value)) {
      return *error;
    }
    *out = std::get<std::string>(std::move(value));
  }
  payment.channel = body.value("channel", json()).is_string() ? body["channel"].get<std::string>()
                                                              : std::string();
  if (!domain::parse_channel(payment.channel)) {
    return ApiError{"channel must be hmac, alipay, wechat, stripe or standard", "channel"};
  }
  dispatch(std::move(respond), [this, payment](auto& store, const Respond& reply) {
    const auto result = store.create_payment(payment);
    // Only after the commit: whatever it starts (the dev mock gateway's callback) must never reach
    // the engine before the payment is visible.
    if (!result.error && result.done == persistence::Done::created && payment_created_) {
      payment_created_(result.row);
    }
    reply(from_store(result));
  });
  return std::nullopt;
}

std::optional<ApiError> OrdersApi::get_payment(const ApiCall& call, Respond& respond) {
  dispatch(std::move(respond), [payment_no = call.args.at(0)](auto& store, const Respond& reply) {
    reply(from_store(store.get_payment(payment_no)));
  });
  return std::nullopt;
}

std::optional<ApiError> OrdersApi::close_payment(const ApiCall& call, Respond& respond) {
  dispatch(std::move(respond), [payment_no = call.args.at(0)](auto& store, const Respond& reply) {
    reply(from_store(store.close_payment(payment_no)));
  });
  return std::nullopt;
}

std::optional<ApiError> OrdersApi::refund_payment(const ApiCall& call, Respond& respond) {
  dispatch(std::move(respond), [payment_no = call.args.at(0)](auto& store, const Respond& reply) {
    reply(from_store(store.refund_payment(payment_no)));
  });
  return std::nullopt;
}

std::optional<ApiError> OrdersApi::sync_payment(const ApiCall& call, Respond& respond) {
  // A sync holds the query actor for one gateway call: it shares the API's in-flight bound.
  if (!take_slot(respond)) {
    return std::nullopt;
  }
  const auto& payment_no = call.args.at(0);
  engine_.sync_payment(
      {payment_no, [this, payment_no, respond = std::move(respond), inflight = inflight_](
                       bool known, const actors::QueryRun& run) {
         inflight->fetch_sub(1, std::memory_order_relaxed);
         if (!known) {
           respond(json_error(404, "unknown payment"));
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
       }});
  return std::nullopt;
}

}  // namespace seatflow::http

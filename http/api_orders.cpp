// Orders, payments and the dev mock gateway's pay endpoint (SPEC §7, §10): validate here, do the
// store work on an API actor, answer the store's result through the status table.
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
  dispatch(std::move(respond), [order_no = call.args.at(0)](auto& store, const Respond& reply) {
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
  const bool auto_mock = settings_.mock_gateway.enabled && settings_.mock_gateway.auto_pay &&
                         payment.channel == domain::to_string(settings_.mock_gateway.channel);
  const auto delay_ms = settings_.mock_gateway.delay_ms;
  dispatch(std::move(respond),
           [this, payment, auto_mock, delay_ms](auto& store, const Respond& reply) {
             const auto result = store.create_payment(payment);
             // Only after the commit: the callback must never arrive before the payment is visible.
             if (result.ok() && result.value().done == persistence::Done::created && auto_mock) {
               const auto& row = result.value().row;
               engine_.mock_deliver({row.payment_no, 1, delay_ms, {}, row.amount_cents});
             }
             reply(from_store(result));
           });
  return {};
}

Result<void> OrdersApi::get_payment(const ApiCall& call, Respond& respond) {
  dispatch(std::move(respond), [payment_no = call.args.at(0)](auto& store, const Respond& reply) {
    reply(from_store(store.get_payment(payment_no)));
  });
  return {};
}

Result<void> OrdersApi::close_payment(const ApiCall& call, Respond& respond) {
  dispatch(std::move(respond), [payment_no = call.args.at(0)](auto& store, const Respond& reply) {
    reply(from_store(store.close_payment(payment_no)));
  });
  return {};
}

Result<void> OrdersApi::refund_payment(const ApiCall& call, Respond& respond) {
  dispatch(std::move(respond), [payment_no = call.args.at(0)](auto& store, const Respond& reply) {
    reply(from_store(store.refund_payment(payment_no)));
  });
  return {};
}

Result<void> OrdersApi::sync_payment(const ApiCall& call, Respond& respond) {
  // A sync holds the query actor for one gateway call: it shares the API's in-flight bound.
  if (!take_slot(respond)) {
    return {};
  }
  const auto& payment_no = call.args.at(0);
  engine_.sync_payment(
      {payment_no, [this, payment_no, respond = std::move(respond), inflight = inflight_](
                       bool known, const actors::QueryRun& run) {
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
       }});
  return {};
}

Result<void> OrdersApi::mock_pay(const ApiCall& call, Respond& respond) {
  const auto parsed = parse_body(call.request);
  if (!parsed.ok()) {
    return std::move(parsed).failure();
  }
  const auto& body = parsed.value();
  auto payment_field = id_field(body, "paymentNo", true);
  if (!payment_field.ok()) {
    return std::move(payment_field).failure();
  }
  const auto payment_no = std::move(payment_field).value();
  if (!body.contains("success") || !body["success"].is_boolean()) {
    return bad_request("success must be true or false", "success");
  }
  const int status = body["success"].get<bool>() ? 1 : 2;
  if (body.contains("notify") && !body["notify"].is_boolean()) {
    return bad_request("notify must be true or false", "notify");
  }
  if (!body.value("notify", true)) {
    // SPEC §10: settled at the mock gateway, the callback lost; only a query finds it.
    engine_.mock_book()->settle(payment_no, status);
    respond(json_response(200, {{"paymentNo", payment_no},
                                {"settled", status == 1 ? "paid" : "failed"},
                                {"notify", false}}));
    return {};
  }
  if (settings_.mock_gateway.channel != domain::Channel::hmac) {
    // The stripe and standard dialects carry the amount: the mock reads it from the payment first.
    dispatch(std::move(respond), [this, payment_no, status](auto& store, const Respond& reply) {
      // An unknown payment is still delivered (amount 0): the notify path answers its 404, as it
      // does for the hmac dialect.
      const auto payment = store.get_payment(payment_no);
      const auto amount = payment.ok() ? payment.value().row.amount_cents : std::int64_t{0};
      mock_send({payment_no, status, 0, {}, amount}, reply);
    });
    return {};
  }
  mock_send({payment_no, status, 0, {}, 0}, respond);
  return {};
}

void OrdersApi::mock_send(actors::MockDelivery delivery, const Respond& respond) {
  // On-demand deliveries share the API's in-flight bound: each holds the mock gateway for a POST.
  Respond answer = respond;
  if (!take_slot(answer)) {
    return;
  }
  delivery.done = [respond, inflight = inflight_](const std::string& callback_id, int http_status,
                                                  const std::string& text) {
    inflight->fetch_sub(1, std::memory_order_relaxed);
    const json answer = {
        {"callbackId", callback_id}, {"notifyStatus", http_status}, {"notifyBody", text}};
    respond(json_response(http_status == 0 ? 502 : 200, answer));
  };
  engine_.mock_deliver(std::move(delivery));
}

}  // namespace seatflow::http

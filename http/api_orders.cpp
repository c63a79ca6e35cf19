// Orders and payments (SPEC §7, §10): validate here, do the store work on an API actor, answer the
// store's result through the status table.
#include <utility>

#include "http/api_routes.hpp"
#include "http/log.hpp"
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
    const auto channel = domain::parse_channel(payment.channel);
    const bool at_gateway = channel && engine_.creates_at_gateway(*channel);
    if (!result.ok() || !at_gateway || result.value().row.pay ||
        result.value().row.status != static_cast<std::int64_t>(domain::PaymentStatus::pending)) {
      // Only after the commit: whatever it starts (the dev mock gateway's callback) must never
      // reach the engine before the payment is visible. A gateway's payment is the gateway's.
      if (result.ok() && result.value().done == persistence::Done::created && !at_gateway &&
          payment_created_) {
        payment_created_(result.value().row);
      }
      reply(from_store(result));
      return;
    }
    create_at_gateway(result.value(), reply);
  });
  return {};
}

void OrdersApi::create_at_gateway(const persistence::Stored<persistence::PaymentRow>& stored,
                                  const Respond& respond) {
  Respond reply = respond;
  if (!take_slot(reply)) {
    return;
  }
  engine_.at_gateway(
      {false, stored.row.payment_no},
      [stored, respond, inflight = inflight_](const actors::GatewayAnswer& answer) {
        inflight->fetch_sub(1, std::memory_order_relaxed);
        using Subject = actors::GatewayAnswer::Subject;
        auto row = stored.row;
        if (answer.subject == Subject::called && answer.run.result == actors::GatewayResult::ok) {
          row.pay = answer.run.pay_json;
          if (!answer.run.gateway_ref.empty()) {
            row.gateway_ref = answer.run.gateway_ref;
          }
          respond(json_response(http_status(stored.done), to_json(row)));
          return;
        }
        if (answer.subject == Subject::called || answer.subject == Subject::store_failed) {
          // SPEC §16: refused, unreachable or not verified: the payment stays PENDING without
          // "pay"; the same request again asks the gateway again with the same trade number.
          const bool store = answer.subject == Subject::store_failed;
          json body = {{"error", std::string(store ? "the gateway's answer could not be kept: "
                                                   : "the gateway did not create the payment: ") +
                                     std::string(actors::to_string(answer.run.result)) +
                                     (answer.run.detail.empty() ? "" : ": " + answer.run.detail)},
                       {"result", actors::to_string(answer.run.result)},
                       {"payment", to_json(row)}};
          respond(json_response(store ? 503 : 502, body));
          return;
        }
        // Gone, paid or closed meanwhile, or no gateway any more: the payment as it was written.
        respond(json_response(http_status(stored.done), to_json(row)));
      },
      unanswered(respond));
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
  bool force = false;
  if (!call.request.body.empty()) {
    const auto body = parse_body(call.request);
    if (!body.ok()) {
      return body.failure();
    }
    const auto field = body.value().find("force");
    if (field != body.value().end() && !field->is_boolean()) {
      return bad_request("force must be true or false", "force");
    }
    force = field != body.value().end() && field->get<bool>();
  }
  if (force) {
    // SPEC §16: closed here without the gateway's word; a late payment is a paid_after_cancel.
    dispatch(std::move(respond),
             [payment_no = payment_no.value()](auto& store, const Respond& reply) {
               logger().warn("event=close_forced payment_no={}", quoted_value(payment_no));
               reply(from_store(store.close_payment(payment_no)));
             });
    return {};
  }
  if (!take_slot(respond)) {
    return {};
  }
  engine_.at_gateway(
      {true, payment_no.value()},
      [this, payment_no = payment_no.value(), respond,
       inflight = inflight_](const actors::GatewayAnswer& answer) {
        inflight->fetch_sub(1, std::memory_order_relaxed);
        after_gateway_close(payment_no, answer, respond);
      },
      unanswered(respond));
  return {};
}

void OrdersApi::after_gateway_close(const std::string& payment_no,
                                    const actors::GatewayAnswer& answer, const Respond& respond) {
  using Subject = actors::GatewayAnswer::Subject;
  switch (answer.subject) {
    case Subject::unknown:
      respond(json_error(http_status(persistence::errc::not_found), "unknown payment"));
      return;
    case Subject::store_failed:
      respond(json_error(503, "unavailable: the payment could not be read"));
      return;
    case Subject::called:
      if (answer.run.result == actors::GatewayResult::ok) {
        break;  // the gateway confirmed: the local close below
      }
      dispatch(respond, [payment_no, run = answer.run](auto& store, const Respond& reply) {
        const auto payment = store.get_payment(payment_no);
        const bool paid = run.result == actors::GatewayResult::paid;
        json body = {{"error", paid ? std::string("already paid")
                                    : "the gateway did not confirm the close: " +
                                          std::string(actors::to_string(run.result)) +
                                          (run.detail.empty() ? "" : ": " + run.detail)},
                     {"result", actors::to_string(run.result)},
                     {"payment", store_body(payment)}};
        if (!paid) {
          body["force"] = "POST {\"force\": true} closes it here without the gateway";
        }
        reply(json_response(paid ? 409 : 502, body));
      });
      return;
    default:
      break;  // not pending any more, or no gateway: the local close answers as it always did
  }
  dispatch(respond, [payment_no](auto& store, const Respond& reply) {
    reply(from_store(store.close_payment(payment_no)));
  });
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

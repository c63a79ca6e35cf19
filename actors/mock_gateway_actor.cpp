// Mock gateway: every delivery gets a fresh callbackId and a real signature, then a real POST.
#include "actors/mock_gateway_actor.hpp"

#include <spdlog/spdlog.h>

#include "http/client.hpp"
#include "persistence/order_store.hpp"

namespace seatflow::actors {
namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void deliver(MockGatewayState& st, const MockDelivery& delivery) {
  const auto callback_id = persistence::new_id("mock");
  if (st.port == 0) {
    if (delivery.done) {
      delivery.done(callback_id, 0, "engine address not known yet");
    }
    return;
  }
  const auto body =
      st.signer->signed_body(callback_id, delivery.payment_no, delivery.status, now_ms());
  const auto response = http::post(st.host, st.port, "/api/payment/notify/hmac", "application/json",
                                   body, {}, st.settings.timeout_ms);
  spdlog::info("event=mock_gateway_delivered payment_no={} status={} http_status={}",
               delivery.payment_no, delivery.status, response.status);
  if (delivery.done) {
    delivery.done(callback_id, response.status,
                  response.status == 0 ? response.error : response.body);
  }
}

}  // namespace

caf::behavior mock_gateway_actor(caf::stateful_actor<MockGatewayState>* self,
                                 MockGatewaySettings settings) {
  auto& st = self->state;
  st.signer = std::make_unique<channels::HmacChannel>(channels::HmacConfig{settings.secrets});
  st.settings = std::move(settings);
  return {
      [self](MockDelivery& delivery) {
        auto& st = self->state;
        if (delivery.delay_ms == 0) {
          deliver(st, delivery);
          return;
        }
        if (st.pending >= st.settings.max_pending) {
          spdlog::warn("event=mock_gateway_dropped payment_no={} reason=too_many_pending",
                       delivery.payment_no);
          return;
        }
        ++st.pending;
        const auto delay = std::chrono::milliseconds(delivery.delay_ms);
        self->delayed_send(self, delay, deliver_atom::value, std::move(delivery));
      },
      [self](deliver_atom, const MockDelivery& delivery) {
        --self->state.pending;
        deliver(self->state, delivery);
      },
      [self](target_atom, const std::string& host, std::uint16_t port) {
        self->state.host = host;
        self->state.port = port;
      },
  };
}

}  // namespace seatflow::actors

// Mock gateway: every delivery gets a fresh callbackId and a real signature, then a real POST.
#include "dev/mock_gateway_actor.hpp"

#include "dev/log.hpp"
#include "domain/assert.hpp"
#include "domain/clock.hpp"
#include "net/http_client.hpp"
#include "persistence/stores/order_store.hpp"

namespace seatflow::dev {

namespace {

// The engine's answer to a notify is a short ACK or error body.
constexpr std::size_t kMockResponseBytesMax = 64 * 1024;

// One signed request in the dialect the mock gateway speaks.
struct Outgoing {
  std::string path;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

Outgoing hmac_request(const MockGatewayState& st, const std::string& callback_id,
                      const MockDelivery& delivery, std::int64_t now) {
  return {"/api/payment/notify/hmac",
          "application/json",
          st.signer->signed_body(callback_id, delivery.payment_no, delivery.status, now),
          {}};
}

Outgoing stripe_request(const MockGatewayState& st, const std::string& callback_id,
                        const MockDelivery& delivery, std::int64_t now) {
  channels::StripeEvent event;
  event.id = callback_id;
  event.type =
      std::string(delivery.status == 1 ? channels::kStripeSucceeded : channels::kStripeFailed);
  event.payment_no = delivery.payment_no;
  event.payment_intent_id = "pi_mock_" + delivery.payment_no;
  event.amount = delivery.amount_cents;
  event.currency = st.settings.currency;
  event.created_s = now / 1000;
  auto body = channels::stripe_event_body(event);
  auto header = channels::stripe_signature_header(st.stripe->keys(), now / 1000, body);
  return {"/api/payment/notify/stripe",
          "application/json",
          std::move(body),
          {{"Stripe-Signature", std::move(header)}}};
}

Outgoing standard_request(const MockGatewayState& st, const std::string& callback_id,
                          const MockDelivery& delivery, std::int64_t now) {
  channels::StandardEvent event;
  event.type =
      std::string(delivery.status == 1 ? channels::kStandardSucceeded : channels::kStandardFailed);
  event.payment_no = delivery.payment_no;
  event.amount_cents = delivery.amount_cents;
  event.trade_no = "mock-trade-" + delivery.payment_no;
  event.timestamp_s = now / 1000;
  auto body = channels::standard_event_body(event);
  auto signature = channels::standard_signature(st.standard->keys(), callback_id, now / 1000, body);
  return {"/api/payment/notify/standard",
          "application/json",
          std::move(body),
          {{"webhook-id", callback_id},
           {"webhook-timestamp", std::to_string(now / 1000)},
           {"webhook-signature", std::move(signature)}}};
}

Outgoing request_for(const MockGatewayState& st, const std::string& callback_id,
                     const MockDelivery& delivery) {
  const auto now = domain::unix_time_ms();
  switch (st.settings.channel) {
    case domain::Channel::stripe:
      return stripe_request(st, callback_id, delivery, now);
    case domain::Channel::standard:
      return standard_request(st, callback_id, delivery, now);
    case domain::Channel::hmac:
    case domain::Channel::alipay:
    case domain::Channel::wechat:
      break;
  }
  return hmac_request(st, callback_id, delivery, now);
}

// Where `request` goes: the notify URL of the payment's creation at the mock, else the engine's
// own notify path of the mock's dialect.
net::Result<net::Url> destination(const MockGatewayState& st, const MockTaken& taken,
                                  const Outgoing& request) {
  if (taken.notify_url.empty()) {
    return net::Url{false, st.host, st.port, request.path};
  }
  return net::parse_url(taken.notify_url);
}

void log_delivery(const MockGatewayState& st, const MockDelivery& delivery, bool created_here,
                  const std::string& outcome) {
  logger().info("event=mock_gateway_delivered channel={} payment_no={} status={} target={} {}",
                created_here ? "hmac" : domain::to_string(st.settings.channel),
                observability::quoted_value(delivery.payment_no), delivery.status,
                created_here ? "notify_url" : "engine", outcome);
}

MockDelivered deliver(MockGatewayState& st, MockDelivery delivery) {
  const auto callback_id = persistence::new_id("mock");
  if (st.port == 0) {
    return {callback_id, false, 0, "engine address not known yet"};
  }
  const auto now = domain::unix_time_ms();
  // The book decides, and settles what it lets through, before anything is sent.
  const auto taken = st.settings.book->take(
      {delivery.payment_no, delivery.status, delivery.amount_cents, delivery.origin, now, now});
  if (taken.verdict != MockVerdict::send) {
    logger().info("event=mock_gateway_not_sent payment_no={} status={} reason={}",
                  observability::quoted_value(delivery.payment_no), delivery.status,
                  to_string(taken.verdict));
    return {callback_id, false, 0, std::string(to_string(taken.verdict)), taken.verdict};
  }
  delivery.amount_cents = taken.amount_cents;
  // A payment created at the mock is the hmac gateway's, whatever dialect the mock speaks else.
  const bool created_here = !taken.notify_url.empty();
  const auto request = created_here ? hmac_request(st, callback_id, delivery, now)
                                    : request_for(st, callback_id, delivery);
  auto url = destination(st, taken, request);
  if (!url.ok()) {
    log_delivery(st, delivery, created_here, "error=" + observability::quoted_value(url.detail()));
    return {callback_id, false, 0, url.detail()};
  }
  net::Request post;
  post.method = "POST";
  post.url = std::move(url).value();
  post.headers = request.headers;
  post.headers.emplace_back("Content-Type", request.content_type);
  post.body = request.body;
  const auto response = st.client->send(post);
  if (!response.ok()) {
    log_delivery(st, delivery, created_here,
                 "error=" + observability::quoted_value(response.detail()));
    return {callback_id, false, 0, response.detail()};
  }
  log_delivery(st, delivery, created_here,
               "http_status=" + std::to_string(response.value().status));
  return {callback_id, true, response.value().status, response.value().body};
}

}  // namespace

MockGatewayActor::behavior_type mock_gateway_actor(
    MockGatewayActor::stateful_pointer<MockGatewayState> self, MockGatewaySettings settings) {
  auto& st = self->state;
  SEATFLOW_ASSERT(settings.book != nullptr);
  st.signer = std::make_unique<channels::HmacChannel>(channels::HmacConfig{settings.secrets});
  // Configuration makes sure the dialect's secrets are set; without them the mock speaks hmac.
  if (settings.channel == domain::Channel::stripe && settings.stripe) {
    st.stripe = std::make_unique<channels::StripeChannel>(*settings.stripe);
  } else if (settings.channel == domain::Channel::standard && settings.standard) {
    st.standard = std::make_unique<channels::StandardChannel>(*settings.standard);
  } else {
    settings.channel = domain::Channel::hmac;
  }
  st.client = std::make_unique<net::HttpClient>(
      net::ClientLimits{settings.timeout_ms, settings.timeout_ms, kMockResponseBytesMax}, "");
  st.settings = std::move(settings);
  return {
      [self](MockDelivery& delivery) {
        auto& st = self->state;
        if (delivery.delay_ms == 0) {
          (void)deliver(st, delivery);
          return;
        }
        if (st.pending >= st.settings.pending_max) {
          logger().warn("event=mock_gateway_dropped payment_no={} reason=too_many_pending",
                        observability::quoted_value(delivery.payment_no));
          return;
        }
        ++st.pending;
        const auto delay = std::chrono::milliseconds(delivery.delay_ms);
        self->delayed_send(self, delay, deliver_atom::value, std::move(delivery));
      },
      [self](pay_atom, const MockDelivery& delivery) -> MockDelivered {
        return deliver(self->state, delivery);
      },
      [self](target_atom, const std::string& host, std::uint16_t port) {
        self->state.host = host;
        self->state.port = port;
      },
      [self](deliver_atom, const MockDelivery& delivery) {
        --self->state.pending;
        (void)deliver(self->state, delivery);
      },
  };
}

}  // namespace seatflow::dev

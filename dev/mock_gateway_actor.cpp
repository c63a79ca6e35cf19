// Mock gateway: every delivery gets a fresh callbackId and a real signature, then a real POST.
#include "dev/mock_gateway_actor.hpp"

#include <algorithm>

#include "dev/log.hpp"
#include "domain/clock.hpp"
#include "net/http_client.hpp"
#include "persistence/stores/order_store.hpp"

namespace seatflow::dev {

void MockGatewayBook::settle(const std::string& payment_no, int status) {
  settle(payment_no, status, 0, domain::unix_time_ms());
}

void MockGatewayBook::settle(const std::string& payment_no, int status, std::int64_t amount_cents,
                             std::int64_t at_ms) {
  const std::lock_guard lock(mutex_);
  const auto [it, inserted] =
      entries_.insert_or_assign(payment_no, Entry{status, amount_cents, at_ms, 0, 0});
  if (inserted) {
    order_.push_back(payment_no);
    if (order_.size() > kEntriesMax) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
  }
}

bool MockGatewayBook::refund(const std::string& payment_no, std::int64_t amount_cents,
                             std::int64_t at_ms) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(payment_no);
  if (it == entries_.end() || it->second.status != 1) {
    return false;
  }
  if (it->second.refunded_at_ms == 0) {  // the first refund of it is the one it made
    it->second.refund_cents = amount_cents;
    it->second.refunded_at_ms = at_ms;
  }
  return true;
}

std::optional<int> MockGatewayBook::status_of(const std::string& payment_no) const {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(payment_no);
  return it == entries_.end() ? std::nullopt : std::optional<int>(it->second.status);
}

std::vector<channels::HmacBillEntry> MockGatewayBook::bill(std::int64_t start_ms,
                                                           std::int64_t end_ms) const {
  std::vector<channels::HmacBillEntry> out;
  const auto within = [start_ms, end_ms](std::int64_t at) { return at >= start_ms && at < end_ms; };
  const std::lock_guard lock(mutex_);
  for (const auto& [payment_no, entry] : entries_) {
    const auto trade = "mock-" + payment_no;
    if (entry.status == 1 && entry.amount_cents > 0 && within(entry.at_ms)) {
      out.push_back(
          {trade, payment_no, channels::BillRowKind::payment, entry.amount_cents, entry.at_ms});
    }
    if (entry.refunded_at_ms != 0 && entry.refund_cents > 0 && within(entry.refunded_at_ms)) {
      out.push_back({trade, payment_no, channels::BillRowKind::refund, entry.refund_cents,
                     entry.refunded_at_ms});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.completed_at_ms != b.completed_at_ms ? a.completed_at_ms < b.completed_at_ms
                                                  : a.trade_no < b.trade_no;
  });
  return out;
}

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

MockDelivered deliver(MockGatewayState& st, const MockDelivery& delivery) {
  const auto callback_id = persistence::new_id("mock");
  if (st.port == 0) {
    return {callback_id, false, 0, "engine address not known yet"};
  }
  const auto request = request_for(st, callback_id, delivery);
  if (st.settings.book) {
    st.settings.book->settle(delivery.payment_no, delivery.status, delivery.amount_cents,
                             domain::unix_time_ms());
  }
  net::Request post;
  post.method = "POST";
  post.url = net::Url{false, st.host, st.port, request.path};
  post.headers = request.headers;
  post.headers.emplace_back("Content-Type", request.content_type);
  post.body = request.body;
  const auto response = st.client->send(post);
  if (!response.ok()) {
    logger().info("event=mock_gateway_delivered channel={} payment_no={} status={} error={}",
                  domain::to_string(st.settings.channel),
                  observability::quoted_value(delivery.payment_no), delivery.status,
                  observability::quoted_value(response.detail()));
    return {callback_id, false, 0, response.detail()};
  }
  logger().info("event=mock_gateway_delivered channel={} payment_no={} status={} http_status={}",
                domain::to_string(st.settings.channel),
                observability::quoted_value(delivery.payment_no), delivery.status,
                response.value().status);
  return {callback_id, true, response.value().status, response.value().body};
}

}  // namespace

MockGatewayActor::behavior_type mock_gateway_actor(
    MockGatewayActor::stateful_pointer<MockGatewayState> self, MockGatewaySettings settings) {
  auto& st = self->state;
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

// The gateway channels and their query, refund, bill and payment dialects, built from the
// configuration.
#include "app/gateways.hpp"

#include <iostream>
#include <stdexcept>

#include "channels/alipay/alipay_bill.hpp"
#include "channels/alipay/alipay_channel.hpp"
#include "channels/alipay/alipay_payment.hpp"
#include "channels/alipay/alipay_query.hpp"
#include "channels/alipay/alipay_refund.hpp"
#include "channels/hmac/hmac_bill.hpp"
#include "channels/hmac/hmac_channel.hpp"
#include "channels/hmac/hmac_payment.hpp"
#include "channels/hmac/hmac_query.hpp"
#include "channels/hmac/hmac_refund.hpp"
#include "channels/standard/standard_channel.hpp"
#include "channels/stripe/stripe_bill.hpp"
#include "channels/stripe/stripe_channel.hpp"
#include "channels/stripe/stripe_payment.hpp"
#include "channels/stripe/stripe_query.hpp"
#include "channels/stripe/stripe_refund.hpp"
#include "channels/wechat/wechat_bill.hpp"
#include "channels/wechat/wechat_channel.hpp"
#include "channels/wechat/wechat_payment.hpp"
#include "channels/wechat/wechat_query.hpp"
#include "channels/wechat/wechat_refund.hpp"
#include "codec/crypto.hpp"
#include "net/message.hpp"

namespace seatflow::app {
namespace {

// The key files were checked by the configuration; a failure here is a start-up error.
codec::SharedKey private_key_of(const std::string& path) {
  auto key = codec::load_private_key_file(path);
  if (!key.ok()) {
    throw std::runtime_error(path + ": " + key.detail());
  }
  return std::move(key).value();
}

codec::SharedKey public_key_of(const std::string& path) {
  auto key = codec::load_public_key_file(path);
  if (!key.ok()) {
    throw std::runtime_error(path + ": " + key.detail());
  }
  return std::move(key).value();
}

// A gateway URL the configuration checked (app/config_gateways.cpp).
net::Url checked_url(const std::string& text) {
  auto url = net::parse_url(text);
  if (!url.ok()) {
    throw std::runtime_error(text + ": " + url.detail());
  }
  return std::move(url).value();
}

void add_hmac_dialects(const Config& config, const channels::Registry& registry,
                       GatewayDialects& dialects) {
  const auto url = checked_url(config.query.hmac_gateway_url);
  const auto* hmac =
      dynamic_cast<const channels::HmacChannel*>(registry.find(domain::Channel::hmac));
  if (hmac != nullptr) {
    dialects.query.push_back(std::make_shared<channels::HmacQuery>(*hmac, url));
    dialects.refund.push_back(std::make_shared<channels::HmacRefund>(
        channels::HmacConfig{config.callback_secrets, config.callback_window_ms}, url));
    dialects.bill.push_back(std::make_shared<channels::HmacBill>(
        channels::HmacConfig{config.callback_secrets, config.callback_window_ms}, url));
    dialects.payment.push_back(std::make_shared<channels::HmacPayment>(
        channels::HmacConfig{config.callback_secrets, config.callback_window_ms}, url));
  }
}

void add_alipay_dialects(const Config& config, GatewayDialects& dialects) {
  auto public_key = public_key_of(config.alipay->public_key_path);
  const channels::AlipayQueryConfig alipay{
      config.alipay->app_id, checked_url(config.query.alipay_gateway_url),
      private_key_of(config.query.alipay_app_private_key_path), std::move(public_key)};
  dialects.query.push_back(std::make_shared<channels::AlipayQuery>(alipay));
  dialects.refund.push_back(std::make_shared<channels::AlipayRefund>(alipay));
  dialects.bill.push_back(std::make_shared<channels::AlipayBill>(alipay));
  dialects.payment.push_back(std::make_shared<channels::AlipayPayment>(alipay));
}

void add_wechat_dialects(const Config& config, GatewayDialects& dialects) {
  const auto& query = config.query;
  channels::WechatPlatformKeys platform;
  for (const auto& entry : config.wechat->platform_keys) {
    platform.emplace_back(entry.serial, public_key_of(entry.pem_path));
  }
  channels::WechatQueryConfig wechat;
  wechat.mchid = config.wechat->mchid;
  wechat.gateway = checked_url(query.wechat_gateway_url);
  wechat.merchant_private_key = private_key_of(query.wechat_merchant_key_path);
  wechat.merchant_serial = query.wechat_merchant_serial;
  wechat.platform_keys = std::move(platform);
  wechat.window_ms = config.callback_window_ms;
  dialects.query.push_back(std::make_shared<channels::WechatQuery>(wechat));
  dialects.bill.push_back(std::make_shared<channels::WechatBill>(wechat));
  dialects.payment.push_back(std::make_shared<channels::WechatPayment>(wechat, query.wechat_appid));
  dialects.refund.push_back(std::make_shared<channels::WechatRefund>(std::move(wechat)));
}

// The key and URL were checked while the configuration loaded.
void add_stripe_dialects(const Config& config, GatewayDialects& dialects) {
  const channels::StripeApiConfig stripe{config.query.stripe_api_key,
                                         checked_url(config.query.stripe_api_url), config.currency};
  dialects.query.push_back(std::make_shared<channels::StripeQuery>(stripe));
  dialects.refund.push_back(std::make_shared<channels::StripeRefund>(stripe));
  dialects.bill.push_back(std::make_shared<channels::StripeBill>(stripe));
  dialects.payment.push_back(std::make_shared<channels::StripePayment>(stripe));
}

}  // namespace

GatewayDialects gateway_dialects(const Config& config, const channels::Registry& registry) {
  GatewayDialects dialects;
  if (!config.query.hmac_gateway_url.empty()) {
    add_hmac_dialects(config, registry, dialects);
  }
  if (!config.query.alipay_gateway_url.empty() && config.alipay) {
    add_alipay_dialects(config, dialects);
  }
  if (!config.query.wechat_gateway_url.empty() && config.wechat) {
    add_wechat_dialects(config, dialects);
  }
  if (!config.query.stripe_api_key.empty()) {
    add_stripe_dialects(config, dialects);
  }
  return dialects;
}

bool add_channels(const Config& config, channels::Registry& registry, std::string& names) {
  registry.add(std::make_unique<channels::HmacChannel>(
      channels::HmacConfig{config.callback_secrets, config.callback_window_ms}));
  names = "hmac";
  if (config.alipay) {
    auto alipay = channels::make_alipay_channel(*config.alipay);
    if (!alipay.ok()) {
      std::cerr << "seatflow: configuration error: SEATFLOW_ALIPAY_PUBLIC_KEY: " << alipay.detail()
                << '\n';
      return false;
    }
    registry.add(std::move(alipay).value());
    names += ",alipay";
  }
  if (config.wechat) {
    auto wechat = channels::make_wechat_channel(*config.wechat);
    if (!wechat.ok()) {
      std::cerr << "seatflow: configuration error: SEATFLOW_WECHAT_PLATFORM_KEYS: "
                << wechat.detail() << '\n';
      return false;
    }
    registry.add(std::move(wechat).value());
    names += ",wechat";
  }
  // The secrets were validated while the configuration loaded; a constructor that still throws
  // is a wiring bug, reported like any start-up failure.
  if (config.stripe) {
    registry.add(std::make_unique<channels::StripeChannel>(*config.stripe));
    names += ",stripe";
  }
  if (config.standard) {
    registry.add(std::make_unique<channels::StandardChannel>(*config.standard));
    names += ",standard";
  }
  return true;
}

}  // namespace seatflow::app

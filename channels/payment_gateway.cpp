// The channel-independent part of the payment at the gateway: pay kinds and values, notify URLs,
// descriptions.
#include "channels/payment_gateway.hpp"

#include "channels/refund.hpp"

namespace seatflow::channels {

std::string_view to_string(PayKind kind) {
  switch (kind) {
    case PayKind::qr:
      return "qr";
    case PayKind::client_secret:
      return "client_secret";
    case PayKind::url:
      return "url";
  }
  return "url";
}

bool valid_pay_value(std::string_view value) {
  if (value.empty() || value.size() > kPayValueBytesMax) {
    return false;
  }
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20U || byte >= 0x7FU) {
      return false;
    }
  }
  return true;
}

std::string notify_url(std::string_view base, domain::Channel channel) {
  std::string url(base);
  while (!url.empty() && url.back() == '/') {
    url.pop_back();
  }
  url.append("/api/payment/notify/");
  url.append(domain::to_string(channel));
  return url;
}

std::string bounded_description(std::string_view text) {
  return bounded_printable(text, kDescriptionBytesMax);
}

}  // namespace seatflow::channels

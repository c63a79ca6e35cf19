// The `stripe` query dialect (SPEC §10, §13): GET /v1/payment_intents/search with
// query=metadata['paymentNo']:'<paymentNo>', authenticated with the secret API key as a bearer
// token. Stripe's API answers over TLS and signs nothing, so the answer is trusted as the
// connection's (the client verifies the server certificate) and checked for the payment, the
// amount and the currency it must be about. What the refund and bill dialects share lives here too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "channels/query.hpp"
#include "channels/stripe/stripe_channel.hpp"
#include "net/message.hpp"

namespace seatflow::channels {

// SEATFLOW_STRIPE_API_URL's default.
inline constexpr std::string_view kStripeDefaultApiUrl = "https://api.stripe.com";
inline constexpr std::string_view kStripeSearchPath = "/v1/payment_intents/search";
// The API version every request pins (Stripe-Version), so that an account's default version
// cannot change the shapes read here.
inline constexpr std::string_view kStripeApiVersion = "2024-06-20";
// An API key goes into a header: at most this long, printable ASCII without spaces.
inline constexpr std::size_t kStripeApiKeyBytesMax = 256;

// What start-up hands over (SEATFLOW_STRIPE_API_KEY, SEATFLOW_STRIPE_API_URL, SEATFLOW_CURRENCY).
struct StripeApiConfig {
  std::string api_key;  // sk_… or rk_…; a secret, never logged
  net::Url api;         // the API base, e.g. https://api.stripe.com
  std::string currency = std::string(kDefaultCurrency);  // lower case, as Stripe writes it
};

// An API key the headers can carry: 1 to kStripeApiKeyBytesMax bytes of printable ASCII, no space.
[[nodiscard]] bool valid_stripe_api_key(std::string_view key);

// Authorization (Bearer), Stripe-Version and Accept, for every request.
[[nodiscard]] net::HeaderList stripe_headers(const StripeApiConfig& config);

// Appends `name=value` to a form body (form-encoded, '&' between fields), as Stripe's POSTs take.
void stripe_form_append(std::string& body, std::string_view name, std::string_view value);

// The search query for a payment: metadata['paymentNo']:'<paymentNo>', with ' and \ escaped by a
// backslash as Stripe's search language requires.
[[nodiscard]] std::string stripe_search_query(std::string_view payment_no);

// The log-safe `error.code` (else `error.type`) of a Stripe error body; "?" when it has neither.
[[nodiscard]] std::string stripe_error_code(std::string_view body);

// The mapping of an answer (exposed for tests): 200 with a search_result of no PaymentIntent =
// not found; of one whose metadata.paymentNo, amount and currency are the payment's: succeeded =
// paid (trade = the intent's id, amount = amount_received), canceled or requires_payment_method
// after a failed attempt (last_payment_error set) = failed, processing and the other requires_* =
// pending. More than one intent, another payment, amount or currency, an unknown status, an
// error answer: a rejection.
[[nodiscard]] Result<QueryAnswer> stripe_query_answer_from(int status, std::string_view body,
                                                           std::string_view currency,
                                                           const QueryTarget& target);

class StripeQuery final : public QueryDialect {
 public:
  // Throws std::invalid_argument for a key valid_stripe_api_key refuses, an API URL without a
  // host, or an empty currency.
  explicit StripeQuery(StripeApiConfig config);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::stripe; }
  [[nodiscard]] net::Request request(const QueryTarget& target, std::int64_t now_ms) const override;
  [[nodiscard]] Result<QueryAnswer> answer(const QueryTarget& target, const net::Response& response,
                                           std::int64_t now_ms) const override;

 private:
  StripeApiConfig config_;
};

// The checks every Stripe dialect's constructor makes (see StripeQuery); the base path of the API
// URL without its trailing slashes. Throws std::invalid_argument naming `who`.
void check_stripe_api_config(StripeApiConfig& config, const char* who);

}  // namespace seatflow::channels

// The `stripe` bill dialect (SPEC §13): the UTC day's balance transactions, GET
// /v1/balance_transactions?created[gte]=S&created[lt]=E&limit=100&expand[]=data.source, page after
// page (starting_after = the last id of the page before) until has_more is false. Rows of type
// charge or payment (source a charge) are payments, of type refund or payment_refund (source a
// refund) refunds; every other type (payouts, fees, adjustments, …) is skipped. Amounts are the
// source's, in the payment's currency and minor units as Stripe gives them; the fee is the balance
// transaction's, in the account's settlement currency. The bill's SHA-256 is over the pages'
// bodies in order.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "channels/bill.hpp"
#include "channels/stripe/stripe_query.hpp"

namespace seatflow::channels {

inline constexpr std::string_view kStripeBalanceTransactionsPath = "/v1/balance_transactions";
// Stripe's largest page.
inline constexpr int kStripeBillPageRows = 100;

// What one page came to.
struct StripeBillPage {
  bool has_more = false;
  std::string last_id;   // the page's last balance transaction (the next page starts after it)
  std::size_t rows = 0;  // rows given to the sink (skipped types not counted)
};

// One page's JSON (a list of balance transactions with expanded sources) read into `sink`, every
// transaction's `created` within `day`, at most `rows_left` rows. Exposed for tests and fuzzing.
[[nodiscard]] Result<StripeBillPage> stripe_bill_page(std::string_view body, const BillDay& day,
                                                      std::size_t rows_left, BillRowSink& sink);

class StripeBill final : public BillDialect {
 public:
  // The query's configuration: the same key and API. Throws as StripeQuery does.
  explicit StripeBill(StripeApiConfig config);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::stripe; }
  // Stripe's balance transactions are listed by UTC day.
  [[nodiscard]] std::string_view bill_zone() const override { return "UTC"; }
  [[nodiscard]] net::Request bill_request(const BillDay& day, std::int64_t now_ms) const override;
  [[nodiscard]] Result<BillStep> step(const BillDay& day, const BillLimits& limits,
                                      BillCursor& cursor, const net::Response& response,
                                      BillRowSink& sink, std::int64_t now_ms) const override;

  // The request for the page after `starting_after` ("" = the first page).
  [[nodiscard]] net::Request page_request(const BillDay& day,
                                          std::string_view starting_after) const;

 private:
  StripeApiConfig config_;
};

}  // namespace seatflow::channels

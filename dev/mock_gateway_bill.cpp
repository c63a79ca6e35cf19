// The mock gateway's daily bill (SPEC §13, hmac dialect): what its book settled and refunded in
// the day, as the signed CSV the hmac bill dialect reads.
#include "channels/hmac/hmac_bill.hpp"
#include "dev/mock_gateway.hpp"
#include "persistence/stores/bill_store.hpp"

namespace seatflow::dev {

void MockGateway::bill(actors::Engine& engine, const http::HttpRequest& request,
                       std::string_view date, http::Respond& respond) const {
  if (request.method != "GET") {
    respond({405, "text/plain", "method not allowed", {}});
    return;
  }
  if (!persistence::valid_bill_date(date) || settings_.secrets.empty()) {
    respond({400, "text/plain", "the date must be a calendar day YYYY-MM-DD", {}});
    return;
  }
  // The day's bounds in the bill's zone come from PostgreSQL, on an API actor (it may block).
  engine.run_api({[self = shared_from_this(), day = std::string(date),
                   respond = std::move(respond)](persistence::OrderStore& store) {
    persistence::BillStore bills(store.session());
    const auto bounds = bills.day_bounds(day, self->settings_.bill_timezone);
    if (!bounds.ok()) {
      respond({503, "text/plain", bounds.detail(), {}});
      return;
    }
    const auto entries = self->settings_.book->bill(bounds.value().first, bounds.value().second);
    if (entries.empty()) {
      respond({404, "text/plain", "no trades that day", {}});
      return;
    }
    auto body = channels::hmac_bill_csv(entries);
    auto signature = channels::hmac_bill_signature(self->settings_.secrets.front(), body);
    respond({200, "text/csv", std::move(body), {{"X-Bill-Signature", std::move(signature)}}});
  }});
}

}  // namespace seatflow::dev

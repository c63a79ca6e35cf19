// The payment at its gateway (SPEC §16): what a create or a close needs to know about a payment,
// the gateway's confirmed creation (the "pay" object and Stripe's PaymentIntent), and the
// sweeper's unconfirmed closes (table payment_gateway).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "domain/types.hpp"
#include "persistence/drivers/errc.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/stores/query_store.hpp"

namespace seatflow::persistence {

// A payment as its gateway calls see it.
struct GatewaySubject {
  DueQuery payment;  // what the query before a close asks about
  std::string order_no;
  std::int64_t expires_at_ms = 0;  // the order's deadline (epoch ms), 0 when it has none
  std::optional<std::string> pay;  // the "pay" object (JSON text) once the gateway created it
  std::string gateway_ref;         // the gateway's own id (Stripe's PaymentIntent), or empty
};

class GatewayStore {
 public:
  explicit GatewayStore(PgSession& pg);

  // errc::not_found for an unknown payment.
  [[nodiscard]] Result<GatewaySubject> subject(const std::string& payment_no);
  // The gateway confirmed the creation: its "pay" object (JSON text) and its own id ("" = none).
  [[nodiscard]] Result<void> record_created(const std::string& payment_no,
                                            const std::string& pay_json,
                                            const std::string& gateway_ref);
  // The sweeper's close was not confirmed: one more attempt counted, and the order is not listed
  // again before `delay_ms` from now.
  [[nodiscard]] Result<void> defer_close(const std::string& payment_no, std::uint32_t delay_ms);

 private:
  PgSession& pg_;
};

}  // namespace seatflow::persistence

// Gateway refunds of discrepancies in PostgreSQL (table refund, source 'discrepancy', one per
// discrepancy; migration 17 moved them there from discrepancy_refund): the refund is written
// before the gateway is asked, so a crash or a second click never sends a second, different
// refund; a success moves it to SUCCEEDED, resolves the discrepancy and writes discrepancy.refunded
// in one transaction; a failed attempt keeps the reason and leaves the refund PENDING and the
// discrepancy open for a retry under the same refund number.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/types.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/stores/order_store.hpp"

namespace seatflow::persistence {

// The discrepancy kinds whose money can be given back (money taken for nothing).
[[nodiscard]] bool refundable_kind(std::string_view kind);

// A pending attempt: what the gateway is asked to refund.
struct RefundAttempt {
  std::int64_t discrepancy_id = 0;
  std::string refund_no;  // the same for every attempt of the discrepancy
  std::string payment_no;
  std::string order_no;
  std::string kind;
  domain::Channel channel = domain::Channel::hmac;
  std::int64_t amount_cents = 0;
  // The trade to give back: the late callback's trade number kept in the discrepancy's detail
  // (channel_trade_no), else the payment's; empty when neither is known.
  std::string trade_no;
  int attempts = 0;  // this one included
};

class RefundStore {
 public:
  explicit RefundStore(PgSession& pg);

  // Takes the discrepancy's refund: a new PENDING row with a fresh refund number, or the existing
  // one again when its last attempt failed or that attempt's lease (`lease_ms` after it started)
  // ran out.
  // `channel_refusal` says why the payment's channel cannot be refunded here ("" when it can).
  // The attempt row is then pending and ours: ask the gateway. Refused as errc::not_found (no such
  // discrepancy), errc::conflict (its kind or its payment's channel cannot be refunded, it is
  // refunded or resolved already, or another attempt holds the row within its lease; the detail
  // says which) or errc::pg_unavailable.
  [[nodiscard]] Result<RefundAttempt> begin(
      std::int64_t discrepancy_id, std::uint32_t lease_ms,
      const std::function<std::string(domain::Channel)>& channel_refusal);
  // The gateway took it: the row succeeded (with the gateway's number), the discrepancy resolved
  // and discrepancy.refunded written, in one transaction. errc::pg_unavailable when the store
  // failed (the row stays pending; a retry after the lease asks the gateway again under the same
  // number).
  [[nodiscard]] Result<void> succeed(const RefundAttempt& attempt, std::string_view reason,
                                     std::string_view gateway_refund_no);
  // The gateway refused, or its answer proved nothing: the attempt ended with `reason`, the refund
  // stays PENDING (the API shows it "failed") and the discrepancy open. errc::pg_unavailable when
  // the store failed.
  [[nodiscard]] Result<void> fail(const RefundAttempt& attempt, std::string_view reason);
  // The discrepancy with its refund, for the refund's answer: the list's row (the order store's
  // kDiscrepancyRowSelect and discrepancy_row(), one field list for both); errc::not_found or
  // errc::pg_unavailable otherwise.
  [[nodiscard]] Result<DiscrepancyRow> discrepancy(std::int64_t discrepancy_id);
  // SEATFLOW_AUTO_REFUND=paid_after_cancel: up to `limit` open paid_after_cancel discrepancies no
  // refund was tried for, oldest first.
  [[nodiscard]] Result<std::vector<std::int64_t>> unrefunded_paid_after_cancel(std::size_t limit);

 private:
  PgSession& pg_;
};

}  // namespace seatflow::persistence

// Gateway refunds of discrepancies in PostgreSQL (table discrepancy_refund, migration 7): the
// attempt is written before the gateway is asked, so a crash or a second click never sends a
// second, different refund; a success resolves the discrepancy and writes discrepancy.refunded in
// one transaction; a failure keeps the reason and leaves the discrepancy open for a retry under
// the same refund number.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "domain/types.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/stores/order_store.hpp"

namespace seatflow::persistence {

// The discrepancy kinds whose money can be given back (money taken for nothing).
[[nodiscard]] bool refundable_kind(std::string_view kind);

enum class RefundBegin : std::uint8_t {
  started,           // the attempt row is pending and ours: ask the gateway
  not_found,         // no such discrepancy
  not_refundable,    // its kind or its payment's channel cannot be refunded (detail says why)
  already_resolved,  // refunded or resolved already
  in_flight,         // another attempt holds the row (within its lease)
  unavailable,       // PostgreSQL unreachable or failing
};

// A pending attempt: what the gateway is asked to refund.
struct RefundAttempt {
  std::int64_t discrepancy_id = 0;
  std::string refund_no;  // the same for every attempt of the discrepancy
  std::string payment_no;
  std::string order_no;
  std::string kind;
  domain::Channel channel = domain::Channel::hmac;
  std::int64_t amount_cents = 0;
  int attempts = 0;  // this one included
};

struct RefundBeginResult {
  RefundBegin status = RefundBegin::unavailable;
  std::string detail;  // log-safe
  RefundAttempt attempt;
};

class RefundStore {
 public:
  explicit RefundStore(PgSession& pg);

  // Takes the discrepancy's refund: a new row with a fresh refund number, or the existing one
  // again when it failed or its pending lease (`lease_ms` after it started) ran out.
  // `channel_refusal` says why the payment's channel cannot be refunded here ("" when it can).
  [[nodiscard]] RefundBeginResult begin(
      std::int64_t discrepancy_id, std::uint32_t lease_ms,
      const std::function<std::string(domain::Channel)>& channel_refusal);
  // The gateway took it: the row succeeded (with the gateway's number), the discrepancy resolved
  // and discrepancy.refunded written, in one transaction. False when the store failed (the row
  // stays pending; a retry after the lease asks the gateway again under the same number).
  [[nodiscard]] bool succeed(const RefundAttempt& attempt, std::string_view reason,
                             std::string_view gateway_refund_no);
  // The gateway refused, or its answer proved nothing: the row failed with `reason`; the
  // discrepancy stays open. False when the store failed.
  [[nodiscard]] bool fail(const RefundAttempt& attempt, std::string_view reason);
  // The discrepancy with its refund, for the refund's answer: the list's row (the order store's
  // kDiscrepancyRowSelect and discrepancy_row(), one field list for both); nullopt when unknown
  // or on failure.
  [[nodiscard]] std::optional<DiscrepancyRow> discrepancy(std::int64_t discrepancy_id);

 private:
  PgSession& pg_;
};

}  // namespace seatflow::persistence

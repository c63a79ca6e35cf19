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

#include <nlohmann/json.hpp>

#include "domain/types.hpp"
#include "persistence/pg.hpp"

namespace seatflow::persistence {

// The columns (and FROM clause, alias d) of a discrepancy as the API shows it, with its refund
// (null when none was tried), for the refund's answer. The list reads the same columns as typed
// rows (OrderStore::list_discrepancies, built into JSON in http/api_json.cpp): a field added here
// is added there.
inline constexpr std::string_view kDiscrepancyJsonSelect =
    "SELECT d.id, d.payment_no AS \"paymentNo\", d.order_no AS \"orderNo\", d.kind, d.detail, "
    "  d.created_at AS \"createdAt\", d.resolved_at AS \"resolvedAt\", "
    "  CASE WHEN r.discrepancy_id IS NULL THEN NULL ELSE json_build_object("
    "    'status', r.status, 'reason', r.reason, 'refundNo', r.refund_no, "
    "    'gatewayRefundNo', r.gateway_refund_no, 'attempts', r.attempts, "
    "    'startedAt', r.started_at, 'finishedAt', r.finished_at) END AS refund "
    "FROM payment_discrepancy d LEFT JOIN discrepancy_refund r ON r.discrepancy_id = d.id ";

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
  // The discrepancy as the API shows it (with its refund); nullopt when unknown or on failure.
  [[nodiscard]] std::optional<nlohmann::json> discrepancy(std::int64_t discrepancy_id);

 private:
  PgSession& pg_;
};

}  // namespace seatflow::persistence

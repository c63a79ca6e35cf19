// The active-query schedule in PostgreSQL (SPEC §10, table payment_query): due payments taken under
// a lease so that engines never ask about one payment at once, attempts recorded, the sweeper's
// one postponement. Every call answers a Result (errc::pg_unavailable when the store failed); no
// libpqxx exception leaves it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/types.hpp"
#include "persistence/drivers/errc.hpp"
#include "persistence/drivers/pg.hpp"

namespace seatflow::persistence {

// A payment whose next query is due.
struct DueQuery {
  std::string payment_no;
  domain::Channel channel = domain::Channel::hmac;
  std::int64_t amount_cents = 0;
  bool pending = false;  // the payment is still PENDING (else its schedule is finished)
  int attempts = 0;      // queries made before this one
};

class QueryStore {
 public:
  explicit QueryStore(PgSession& pg);

  // Up to `limit` due rows, oldest first; in the same statement their next_at moves `lease_ms`
  // ahead (rows another engine holds are skipped), so nobody else takes them meanwhile.
  [[nodiscard]] Result<std::vector<DueQuery>> claim_due(std::size_t limit, std::uint32_t lease_ms);
  // The payment's query as a due row now (sync API, sweeper), whatever its schedule says;
  // errc::not_found for an unknown payment.
  [[nodiscard]] Result<DueQuery> load(const std::string& payment_no);
  // After an attempt: attempts + 1, the result, and the next time (`next_delay_ms`), or the
  // schedule finished (nullopt).
  [[nodiscard]] Result<void> record(const std::string& payment_no, std::string_view result,
                                    std::optional<std::uint32_t> next_delay_ms);
  // Back into the queue without counting an attempt (rate limit reached).
  [[nodiscard]] Result<void> defer(const std::string& payment_no, std::uint32_t delay_ms);
  // The sweeper's one postponement of an expired order whose gateway could not be reached: true
  // when this call took it (the order's expiry moved `delay_ms` ahead), false when it was spent.
  [[nodiscard]] Result<bool> postpone_expiry(const std::string& payment_no, std::uint32_t delay_ms);

 private:
  PgSession& pg_;
};

}  // namespace seatflow::persistence

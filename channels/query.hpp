// Active query (SPEC §10): each channel asks its gateway about one payment and turns the verified
// answer into paid (trade no, amount) | failed | pending | not found. An answer that fails
// verification, is malformed, names another payment or another amount is a rejection and changes
// nothing. A paid or failed answer becomes a verified callback (id `query:<paymentNo>:<1|2>`) that
// runs through the same pipeline as a gateway's callback.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "channels/errc.hpp"
#include "domain/types.hpp"
#include "net/message.hpp"

namespace seatflow::channels {

enum class QueryState : std::uint8_t { paid, failed, pending, not_found };

[[nodiscard]] std::string_view to_string(QueryState state);

struct QueryAnswer {
  QueryState state = QueryState::pending;
  std::string trade_no;                      // the gateway's trade number, when it gave one
  std::optional<std::int64_t> amount_cents;  // what the gateway says was taken, when it says
};

// The payment asked about.
struct QueryTarget {
  std::string payment_no;
  std::int64_t amount_cents = 0;
};

// One channel's query dialect. Implementations are pure (OpenSSL only) and safe from any thread.
class QueryDialect {
 public:
  virtual ~QueryDialect() = default;
  [[nodiscard]] virtual domain::Channel channel() const = 0;
  // The request that asks the gateway about the payment, signed as the gateway requires.
  [[nodiscard]] virtual net::Request request(const QueryTarget& target,
                                             std::int64_t now_ms) const = 0;
  // The gateway's answer, verified and mapped. An amount that differs from the target's, or an
  // answer about another payment, is a rejection (errc::rejected_answer, its detail log-safe:
  // never a body, a signature or a key).
  [[nodiscard]] virtual Result<QueryAnswer> answer(const QueryTarget& target,
                                                   const net::Response& response,
                                                   std::int64_t now_ms) const = 0;
};

// The callback id of a query answer: `query:<paymentNo>:<1|2>`; one per payment and outcome, so
// asking again and again is an ordinary duplicate.
[[nodiscard]] std::string query_callback_id(std::string_view payment_no, QueryState state);

// The verified callback that a paid or failed answer is; nullopt for pending and not found.
[[nodiscard]] std::optional<domain::VerifiedCallback> callback_of(const QueryTarget& target,
                                                                  domain::Channel channel,
                                                                  const QueryAnswer& answer);

}  // namespace seatflow::channels

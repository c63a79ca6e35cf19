// Applies one verified callback in one PostgreSQL transaction with the Redis seat move (SPEC §6).
#pragma once

#include "domain/outcome.hpp"
#include "domain/types.hpp"
#include "persistence/pg.hpp"
#include "persistence/seat_scripts.hpp"

namespace seatflow::persistence {

// True when a callback's channel trade number is the one that already paid the payment: a copy of
// that success (e.g. after retention removed its log row), not new money.
[[nodiscard]] bool same_trade(const std::string& callback_trade_no,
                              const std::string& payment_trade_no);

class CallbackStore {
 public:
  CallbackStore(PgSession& pg, SeatStore& seats, Failpoints* failpoints);

  // Never throws: database and Redis errors become `unavailable` or `mark_sold_failed`.
  [[nodiscard]] domain::CallbackOutcome process(const domain::VerifiedCallback& callback);

 private:
  domain::CallbackOutcome run_transaction(const domain::VerifiedCallback& callback);

  PgSession& pg_;
  SeatStore& seats_;
  Failpoints* failpoints_;
};

}  // namespace seatflow::persistence

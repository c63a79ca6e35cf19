// A bill reconciliation below HTTP for tests (SPEC §13): a private database with the real
// migrations, the real Redis, a fake hmac bill gateway, the runner with the real hmac dialect, its
// repairs through the callback executor (as `seatflow reconcile-bill` runs them), and helpers that
// seed payments in given states and read items and discrepancies back.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/bill_actor.hpp"
#include "actors/bill_runner.hpp"
#include "observability/registry.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/drivers/redis.hpp"
#include "persistence/stores/bill_store.hpp"
#include "persistence/stores/callback_store.hpp"
#include "persistence/stores/seat_scripts.hpp"
#include "support/fake_hmac_bill.hpp"
#include "support/process.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {

inline constexpr const char* kBillSecret = "bill-test-gateway-secret";

// The environment of `seatflow reconcile-bill` on `db` with the fake hmac bill gateway at
// `gateway_url` (dev profile, the gateway's secret, warnings only).
[[nodiscard]] EnvOverrides bill_cli_env(const PrivateDatabase& db, const std::string& gateway_url);

class BillWorld {
 public:
  explicit BillWorld(actors::BillSettings settings = {});

  // Runs the hmac bill of `date` as the CLI does.
  [[nodiscard]] actors::BillRunResult run(const std::string& date);

  // A payment (and its order) in the given statuses; paid_at (and, for a refunded payment,
  // updated_at) at `at_ms` when not 0, channel_trade_no `trade` when not empty. Returns its number.
  std::string seed(const std::string& name, int payment_status, int order_status,
                   std::int64_t amount_cents, const std::string& trade, std::int64_t at_ms);
  // A pending payment with its order and locked seats.
  std::string pending(const std::string& name, std::int64_t amount_cents = 5000);

  // The outcomes of the run's items of this payment and kind, in seq order.
  [[nodiscard]] std::vector<std::string> outcomes(std::int64_t run_id,
                                                  const std::string& payment_no,
                                                  const std::string& kind = "payment");
  // Discrepancies of a payment and kind, open or not.
  [[nodiscard]] int discrepancies(const std::string& payment_no, const std::string& kind);
  [[nodiscard]] std::int64_t scalar(const std::string& sql);

  Stores& stores() { return *stores_; }
  FakeHmacBill& gateway() { return gateway_; }
  persistence::BillStore& store() { return *store_; }
  actors::BillRunner& runner() { return *runner_; }
  const std::string& dsn() const { return db_.dsn(); }

 private:
  PrivateDatabase db_;
  std::unique_ptr<Stores> stores_;
  FakeHmacBill gateway_{kBillSecret};
  std::unique_ptr<persistence::PgSession> pg_;
  std::unique_ptr<persistence::RedisClient> redis_;
  std::unique_ptr<persistence::SeatStore> seats_;
  std::unique_ptr<persistence::CallbackStore> callbacks_;
  std::unique_ptr<persistence::BillStore> store_;
  observability::Registry metrics_;
  std::unique_ptr<actors::BillRunner> runner_;
  int seats_made_ = 0;
};

// A bill entry.
[[nodiscard]] channels::HmacBillEntry bill_payment(const std::string& trade,
                                                   const std::string& payment_no,
                                                   std::int64_t amount_cents, std::int64_t at_ms);
[[nodiscard]] channels::HmacBillEntry bill_refund(const std::string& trade,
                                                  const std::string& payment_no,
                                                  std::int64_t amount_cents, std::int64_t at_ms);

}  // namespace seatflow::testing

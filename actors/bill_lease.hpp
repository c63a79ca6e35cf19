// The leases of a process's bill runs (SPEC §13, bill_run.holder and lease_until): a thread with a
// PostgreSQL session of its own renews the running runs this holder holds every third of their
// lease while any is open here (the run's own session is busy in its COPY and its chunks), so a
// run that is alive keeps its lease and one left by a crash is taken over once its short lease
// passes. At start it fails the runs its holder still holds (a crash of this same engine: its
// holder is the same after the restart); at stop, once the run in progress wrote its end, it
// fails whatever this holder still holds (runs opened and not started).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "persistence/drivers/pg.hpp"
#include "persistence/stores/bill_store.hpp"

namespace seatflow::actors {

// The bound of each of the keeper's calls (its start's, each renewal, its release's).
inline constexpr std::uint32_t kBillLeaseCallMsMax = 3'000;

class BillLeaseKeeper {
 public:
  // `active`: how many runs are open here (BillRunner::active); renewals happen only then. Fails
  // this holder's running runs before it returns (reason "abandoned: its engine restarted";
  // logged, not thrown, when PostgreSQL cannot be reached: their leases then pass).
  BillLeaseKeeper(std::string dsn, persistence::PgLimits limits, std::string holder,
                  std::uint32_t lease_ms, std::function<std::int64_t()> active);
  ~BillLeaseKeeper();
  BillLeaseKeeper(const BillLeaseKeeper&) = delete;
  BillLeaseKeeper& operator=(const BillLeaseKeeper&) = delete;

  // Stops renewing and, when a run is still open here, fails the runs this holder still holds
  // ("the engine stopped during the run"). Once.
  void release();

 private:
  void renew_loop();
  void fail_held(const std::string& reason);

  std::string holder_;
  std::uint32_t lease_ms_;
  std::function<std::int64_t()> active_;
  std::unique_ptr<persistence::PgSession> pg_;
  std::unique_ptr<persistence::BillStore> store_;
  std::mutex mutex_;  // guards stopping_ and the session
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace seatflow::actors

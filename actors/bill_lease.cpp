// The bill runs' lease keeper: fail at start, renew while open, fail at stop.
#include "actors/bill_lease.hpp"

#include <algorithm>

#include "actors/log.hpp"

namespace seatflow::actors {

BillLeaseKeeper::BillLeaseKeeper(std::string dsn, persistence::PgLimits limits, std::string holder,
                                 std::uint32_t lease_ms, std::function<std::int64_t()> active)
    : holder_(std::move(holder)), lease_ms_(lease_ms), active_(std::move(active)) {
  // A session of its own (and a watchdog of its own: the engine's stop aborts every store call,
  // and the keeper's last call comes just before that), each call bounded short: a store that
  // does not answer delays the engine's start or stop by kBillLeaseCallMsMax at most.
  limits.call_ms_max = std::min(limits.call_ms_max, kBillLeaseCallMsMax);
  limits.statement_ms_max = std::min(limits.statement_ms_max, kBillLeaseCallMsMax);
  pg_ = std::make_unique<persistence::PgSession>(std::move(dsn), limits, nullptr, nullptr);
  store_ = std::make_unique<persistence::BillStore>(*pg_);
  fail_held("abandoned: its engine restarted");
  thread_ = std::thread([this] { renew_loop(); });
}

BillLeaseKeeper::~BillLeaseKeeper() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void BillLeaseKeeper::release() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) {
      return;
    }
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
  if (active_() > 0) {
    fail_held("the engine stopped during the run");
  }
}

void BillLeaseKeeper::fail_held(const std::string& reason) {
  const auto failed = store_->fail_held(holder_, reason);
  if (!failed.ok()) {
    logger().warn("event=bill_runs_unreleased holder={} detail={}", quoted_value(holder_),
                  quoted_value(failed.detail()));
    return;
  }
  for (const auto id : failed.value()) {
    logger().warn("event=bill_run_failed_by_holder run_id={} holder={} reason={}", id,
                  quoted_value(holder_), quoted_value(reason));
  }
}

void BillLeaseKeeper::renew_loop() {
  const auto period = std::chrono::milliseconds(std::max<std::uint32_t>(1, lease_ms_ / 3));
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
    if (active_() <= 0) {
      continue;
    }
    const auto renewed = store_->renew(holder_, lease_ms_);
    if (!renewed.ok()) {
      logger().warn("event=bill_lease_unrenewed holder={} detail={}", quoted_value(holder_),
                    quoted_value(renewed.detail()));
    }
  }
}

}  // namespace seatflow::actors

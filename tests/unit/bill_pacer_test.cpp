// The bill run's rests (actors/bill_pacer.hpp): the work share, longer while the machine's CPUs
// are busy, too short an interval left to the last verdict, a stop ending a rest, and the run's
// thread at a lower priority.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "actors/bill_pacer.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using actors::BillPacer;
using actors::CpuTimes;
using std::chrono::milliseconds;

// A machine whose CPU counters the test moves, and a sleep that only records.
struct World {
  CpuTimes cpu{1000, 10'000};
  std::vector<BillPacer::Duration> slept;
  std::atomic<bool> stopping{false};

  BillPacer pacer(std::uint32_t share_pct) {
    return BillPacer(
        share_pct, stopping, [this]() -> std::optional<CpuTimes> { return cpu; },
        [this](BillPacer::Duration span) { slept.push_back(span); });
  }
  // `busy` of `total` jiffies pass.
  void pass(std::uint64_t busy, std::uint64_t total) {
    cpu.busy += busy;
    cpu.total += total;
  }
  [[nodiscard]] milliseconds total_slept() const {
    BillPacer::Duration sum{0};
    for (const auto span : slept) {
      sum += span;
    }
    return std::chrono::duration_cast<milliseconds>(sum);
  }
};

TEST(BillPacer, RestsForTheWorkShareInStopSizedSlices) {
  World w;
  auto pacer = w.pacer(25);
  w.pass(50, 200);  // a quarter busy
  ASSERT_TRUE(pacer.rest(milliseconds(40)));
  EXPECT_EQ(w.total_slept(), milliseconds(120));  // 40 ms of work is 25 % of 160 ms
  for (const auto span : w.slept) {
    EXPECT_LE(span, milliseconds(actors::kBillRestSliceMs));
  }
  EXPECT_EQ(pacer.busy_rests(), 0U);
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(pacer.rested()), milliseconds(120));
}

TEST(BillPacer, ABusyMachineMakesTheRestLonger) {
  World w;
  auto pacer = w.pacer(50);
  w.pass(190, 200);  // 95 % busy
  ASSERT_TRUE(pacer.rest(milliseconds(10)));
  EXPECT_EQ(w.total_slept(), milliseconds(10 * actors::kBillBusyRestFactor));
  EXPECT_EQ(pacer.busy_rests(), 1U);
  // Free again: the plain share.
  w.slept.clear();
  w.pass(40, 200);
  ASSERT_TRUE(pacer.rest(milliseconds(10)));
  EXPECT_EQ(w.total_slept(), milliseconds(10));
  EXPECT_EQ(pacer.busy_rests(), 1U);
}

TEST(BillPacer, TooFewJiffiesKeepTheLastVerdict) {
  World w;
  auto pacer = w.pacer(50);
  w.pass(190, 200);
  ASSERT_TRUE(pacer.rest(milliseconds(10)));
  w.slept.clear();
  w.pass(0, actors::kBillBusyJiffiesMin - 1);  // idle, but too short to tell
  ASSERT_TRUE(pacer.rest(milliseconds(10)));
  EXPECT_EQ(w.total_slept(), milliseconds(10 * actors::kBillBusyRestFactor));
}

TEST(BillPacer, AFullShareNeverRestsAndAStopEndsARest) {
  World w;
  auto full = w.pacer(100);
  w.pass(200, 200);
  ASSERT_TRUE(full.rest(milliseconds(500)));
  EXPECT_TRUE(w.slept.empty());
  auto paced = w.pacer(10);
  w.stopping.store(true);
  EXPECT_FALSE(paced.rest(milliseconds(500)));
  EXPECT_TRUE(w.slept.empty());
}

TEST(BillPacer, TheRunsThreadWorksAtALowerPriority) {
  int before = 0;
  int after = 0;
  bool lowered = false;
  std::thread worker([&] {
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    before = ::getpriority(PRIO_PROCESS, tid);
    lowered = actors::lower_this_thread_priority();
    after = ::getpriority(PRIO_PROCESS, tid);
  });
  worker.join();
  ASSERT_TRUE(lowered);
  // Lowered to the bill's nice, never raised from a lower priority it started at.
  EXPECT_EQ(after, std::max(before, actors::kBillThreadNice));
  // The test's own thread is untouched.
  EXPECT_EQ(::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid))), before);
}

TEST(BillPacer, ReadsThisMachinesCpuTimes) {
  const auto first = actors::read_cpu_times();
  ASSERT_TRUE(first);
  EXPECT_GT(first->total, 0U);
  EXPECT_LE(first->busy, first->total);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

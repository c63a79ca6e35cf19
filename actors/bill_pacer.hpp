// Paces a bill run's work (SPEC §13) so that the callbacks keep the machine: after each slice of
// work (rows parsed, a chunk of items) the run rests for SEATFLOW_BILL_WORK_SHARE_PCT of its wall
// time, and kBillBusyRestFactor times longer while the machine's CPUs were at least
// kBillBusyCpuPct busy since the last rest (a saturating load: the run then takes what the
// callbacks leave). The machine's load is read from /proc/stat, so it is this host's: a
// PostgreSQL on another host is not seen. The run's own thread works at kBillThreadNice. Blocking
// (it sleeps): the bill actor and the CLI only.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

namespace seatflow::actors {

// A machine this busy (all CPUs, our own work included) makes the run rest longer.
inline constexpr std::uint32_t kBillBusyCpuPct = 90;
inline constexpr std::uint32_t kBillBusyRestFactor = 8;
// Fewer jiffies (all CPUs) than this since the last verdict are too few to tell: it stands.
inline constexpr std::uint64_t kBillBusyJiffiesMin = 20;
// The nice value of the thread a run works on (the bill actor's own, or the CLI's): its parse
// yields the CPU to the callbacks' threads whenever both want it.
inline constexpr int kBillThreadNice = 10;
// Lowers the calling thread to kBillThreadNice (never raises it); false when the system refused.
bool lower_this_thread_priority();

// The longest single sleep of a rest: a stop is seen within it.
inline constexpr std::uint32_t kBillRestSliceMs = 50;

// Jiffies of all CPUs since boot: busy (not idle, not waiting for I/O) and in all.
struct CpuTimes {
  std::uint64_t busy = 0;
  std::uint64_t total = 0;
};
// The first line of /proc/stat; nullopt where it cannot be read.
[[nodiscard]] std::optional<CpuTimes> read_cpu_times();

class BillPacer {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using CpuSource = std::function<std::optional<CpuTimes>()>;
  using Sleep = std::function<void(Duration)>;

  // `share_pct` 1..100 (100: never rests); `stopping` ends every rest at once.
  BillPacer(std::uint32_t share_pct, const std::atomic<bool>& stopping,
            CpuSource cpu = read_cpu_times, Sleep sleep = nullptr);

  // Rests after a slice that took `worked`; false once a stop was asked.
  [[nodiscard]] bool rest(Duration worked);
  // Rests taken longer because the machine was busy.
  [[nodiscard]] std::uint64_t busy_rests() const { return busy_rests_; }
  [[nodiscard]] Duration rested() const { return rested_; }

 private:
  [[nodiscard]] bool machine_busy();

  std::uint32_t share_pct_;
  const std::atomic<bool>& stopping_;
  CpuSource cpu_;
  Sleep sleep_;
  std::optional<CpuTimes> last_;
  bool busy_ = false;
  std::uint64_t busy_rests_ = 0;
  Duration rested_{0};
};

}  // namespace seatflow::actors

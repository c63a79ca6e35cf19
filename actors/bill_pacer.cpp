// The bill run's rests: the work share, longer on a busy machine, a stop seen within a slice.
#include "actors/bill_pacer.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <string>
#include <thread>

namespace seatflow::actors {

std::optional<CpuTimes> read_cpu_times() {
  std::ifstream stat("/proc/stat");
  std::string label;
  if (!(stat >> label) || label != "cpu") {
    return std::nullopt;
  }
  // user nice system idle iowait irq softirq steal (guest time is inside user and nice)
  CpuTimes times;
  for (int field = 0; field < 8; ++field) {
    std::uint64_t value = 0;
    if (!(stat >> value)) {
      return std::nullopt;
    }
    times.total += value;
    if (field != 3 && field != 4) {
      times.busy += value;
    }
  }
  return times;
}

bool lower_this_thread_priority() {
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  if (errno == 0 && now >= kBillThreadNice) {
    return true;
  }
  return ::setpriority(PRIO_PROCESS, tid, kBillThreadNice) == 0;
}

BillPacer::BillPacer(std::uint32_t share_pct, const std::atomic<bool>& stopping, CpuSource cpu,
                     Sleep sleep)
    : share_pct_(std::clamp<std::uint32_t>(share_pct, 1, 100)),
      stopping_(stopping),
      cpu_(std::move(cpu)),
      sleep_(std::move(sleep)) {
  if (!sleep_) {
    sleep_ = [](Duration span) { std::this_thread::sleep_for(span); };
  }
  last_ = cpu_ ? cpu_() : std::nullopt;
}

bool BillPacer::machine_busy() {
  const auto now = cpu_ ? cpu_() : std::nullopt;
  if (!now || !last_ || now->total < last_->total || now->busy < last_->busy) {
    last_ = now;
    busy_ = false;
    return busy_;
  }
  const auto total = now->total - last_->total;
  if (total < kBillBusyJiffiesMin) {
    return busy_;  // too short to tell: the last verdict, measured on from the same start
  }
  busy_ = (now->busy - last_->busy) * 100 >= total * kBillBusyCpuPct;
  last_ = now;
  return busy_;
}

bool BillPacer::rest(Duration worked) {
  auto left = worked * (100 - share_pct_) / share_pct_;
  if (machine_busy()) {
    left *= kBillBusyRestFactor;
    ++busy_rests_;
  }
  while (!stopping_.load()) {
    if (left <= Duration::zero()) {
      return true;
    }
    const auto span = std::min<Duration>(left, std::chrono::milliseconds(kBillRestSliceMs));
    sleep_(span);
    rested_ += span;
    left -= span;
  }
  return false;
}

}  // namespace seatflow::actors

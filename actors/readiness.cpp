// Readiness: the prober's last verdict, overridden while a probe overruns its bound.
#include "actors/readiness.hpp"

namespace seatflow::actors {

void Readiness::probe_started(const char* store, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  probing_ = store;
  probe_started_at_ = now;
}

void Readiness::publish(ReadyState state) {
  std::lock_guard lock(mutex_);
  last_ = std::move(state);
  probing_ = nullptr;
}

ReadyState Readiness::read(Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  if (probing_ != nullptr && now - probe_started_at_ > probe_ms_max_) {
    return {false, std::string(probing_) + " missed its deadline"};
  }
  return last_;
}

}  // namespace seatflow::actors

// The readiness the background prober last saw, read by /readyz without waiting for any store.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace seatflow::actors {

// The readiness prober's timing (SEATFLOW_READY_PROBE_INTERVAL_MS,
// SEATFLOW_READY_PROBE_TIMEOUT_MS).
struct ProberSettings {
  std::uint32_t interval_ms = 500;  // between the end of a probe and the next
  // One probe of one store; a probe still running past it is not ready at once.
  std::uint32_t probe_ms_max = 1'000;
  // Prod: Redis with an evicting maxmemory-policy (or one that cannot be read) is not ready, also
  // when it was changed after start or was unreachable then (SPEC §14).
  bool require_noeviction = false;
};

// A readiness verdict and, when not ready, why.
struct ReadyState {
  bool ready = false;
  std::string reason;
};

// Written by the prober only, read by any thread; every read is a short critical section.
class Readiness {
 public:
  using Clock = std::chrono::steady_clock;

  // A probe running longer than `probe_ms_max` makes the engine not ready before it ends.
  explicit Readiness(std::chrono::milliseconds probe_ms_max) : probe_ms_max_(probe_ms_max) {}

  // The prober starts a probe (of `store`, named in the reason if it overruns).
  void probe_started(const char* store, Clock::time_point now);
  // The prober's verdict on the probe that began last.
  void publish(ReadyState state);
  // Not ready before the first verdict, while a probe overruns its bound, or as last published.
  [[nodiscard]] ReadyState read(Clock::time_point now) const;

 private:
  std::chrono::milliseconds probe_ms_max_;
  mutable std::mutex mutex_;
  ReadyState last_{false, "starting: no probe finished yet"};
  const char* probing_ = nullptr;  // the store of the probe in progress, null between probes
  Clock::time_point probe_started_at_{};
};

}  // namespace seatflow::actors

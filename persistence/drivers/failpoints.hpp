// Failure injection for chaos tests (SPEC §8): named points that fail or stall with a probability.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "persistence/drivers/errc.hpp"

#include "observability/registry.hpp"

namespace seatflow::persistence {

// relay_mark sits between the event relay's XADD and its confirm of the slot, so a crash there
// republishes the batch (at-least-once; the repeats carry the same event ids).
// pg_commit_unknown sits right after a callback transaction's COMMIT: the commit went through and
// the connection is dropped as if its answer had been lost, so the engine cannot know the outcome
// (pqxx::in_doubt_error): it answers 503 and the gateway's resend must find a duplicate.
// flush_commit_unknown is the same after a duplicate-count flush's COMMIT: the next flush must ask
// PostgreSQL how it ended instead of writing its counts again.
enum class FailpointId : std::uint8_t {
  mark_sold = 0,
  pg_commit,
  pg_connect,
  redis,
  relay_mark,
  pg_commit_unknown,
  flush_commit_unknown
};
inline constexpr std::size_t kFailpointCount = 7;
[[nodiscard]] std::string_view to_string(FailpointId id);

enum class FailAction : std::uint8_t { none, error, delay };

struct FailpointRule {
  FailAction action = FailAction::none;
  std::uint32_t delay_ms = 0;
  double probability = 1.0;
};

// Parsed once at start-up; `hit()` is one relaxed load when the point is unset.
class Failpoints {
 public:
  Failpoints() = default;
  // Parses "mark_sold=error@0.1,pg_commit=delay:200ms@0.05"; errc::bad_setting (the detail says
  // which entry and why) on bad input.
  [[nodiscard]] static Result<Failpoints> parse(std::string_view spec);

  // Applies the rule for `id`: sleeps for a delay; returns true when the caller must fail.
  [[nodiscard]] bool hit(FailpointId id);
  [[nodiscard]] std::uint64_t hits(FailpointId id) const;

  Failpoints(const Failpoints& other);
  Failpoints& operator=(const Failpoints& other);

 private:
  std::array<FailpointRule, kFailpointCount> rules_{};
  std::array<std::atomic<std::uint64_t>, kFailpointCount> hits_{};
};

// The failpoints' probe: seatflow_failpoint_hits_total{name} for every failpoint, brought up to
// `failpoints`' hits at each scrape (nullptr: they all stay 0). `failpoints` outlives the probe.
class FailpointProbe {
 public:
  FailpointProbe(observability::Registry& registry, const Failpoints* failpoints);
  FailpointProbe(const FailpointProbe&) = delete;
  FailpointProbe& operator=(const FailpointProbe&) = delete;

 private:
  std::array<prometheus::Counter*, kFailpointCount> hits_{};
  observability::ScrapeHook hook_;  // last: unregistered before the counters' pointers go
};

}  // namespace seatflow::persistence

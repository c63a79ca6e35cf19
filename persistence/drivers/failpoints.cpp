// Parses SEATFLOW_FAILPOINTS and applies the rules at the named points.
#include "persistence/drivers/failpoints.hpp"

#include <charconv>
#include <chrono>
#include <random>
#include <thread>

namespace seatflow::persistence {
namespace {

constexpr std::array<std::string_view, kFailpointCount> kNames = {
    "mark_sold",  "pg_commit",         "pg_connect",          "redis",
    "relay_mark", "pg_commit_unknown", "flush_commit_unknown"};
constexpr std::uint32_t kMaxDelayMs = 60'000;

std::optional<FailpointId> find_id(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) {
      return static_cast<FailpointId>(i);
    }
  }
  return std::nullopt;
}

Result<void> parse_rule(std::string_view text, FailpointRule& rule) {
  if (const auto at = text.find('@'); at != std::string_view::npos) {
    const auto prob = std::string(text.substr(at + 1));
    char* end = nullptr;
    rule.probability = std::strtod(prob.c_str(), &end);
    if (prob.empty() || end != prob.c_str() + prob.size() || rule.probability < 0.0 ||
        rule.probability > 1.0) {
      return refused(errc::bad_setting, "probability '" + prob + "' must be a number in [0, 1]");
    }
    text = text.substr(0, at);
  }
  if (text == "error") {
    rule.action = FailAction::error;
    return {};
  }
  if (text.starts_with("delay:") && text.ends_with("ms")) {
    const auto digits = text.substr(6, text.size() - 8);
    const auto [ptr, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), rule.delay_ms);
    if (ec == std::errc{} && ptr == digits.data() + digits.size() && rule.delay_ms <= kMaxDelayMs) {
      rule.action = FailAction::delay;
      return {};
    }
  }
  return refused(errc::bad_setting,
                 "action '" + std::string(text) + "' must be error or delay:<N>ms (N <= 60000)");
}

bool roll(double probability) {
  if (probability >= 1.0) {
    return true;
  }
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng) < probability;
}

}  // namespace

std::string_view to_string(FailpointId id) {
  return kNames[static_cast<std::size_t>(id)];
}

Result<Failpoints> Failpoints::parse(std::string_view spec) {
  Failpoints points;
  while (!spec.empty()) {
    const auto comma = spec.find(',');
    auto item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    if (item.empty()) {
      continue;
    }
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      return refused(errc::bad_setting,
                     "entry '" + std::string(item) + "' must be name=action[@probability]");
    }
    const auto id = find_id(item.substr(0, eq));
    if (!id) {
      return refused(errc::bad_setting,
                     "names unknown point '" + std::string(item.substr(0, eq)) +
                         "' (known: mark_sold, pg_commit, pg_connect, redis, relay_mark, "
                         "pg_commit_unknown, flush_commit_unknown)");
    }
    if (const auto rule =
            parse_rule(item.substr(eq + 1), points.rules_[static_cast<std::size_t>(*id)]);
        !rule.ok()) {
      return refused(errc::bad_setting, "entry '" + std::string(item) + "': " + rule.detail());
    }
  }
  return points;
}

Failpoints::Failpoints(const Failpoints& other) : rules_(other.rules_) {}

Failpoints& Failpoints::operator=(const Failpoints& other) {
  rules_ = other.rules_;
  return *this;
}

bool Failpoints::hit(FailpointId id) {
  const auto& rule = rules_[static_cast<std::size_t>(id)];
  if (rule.action == FailAction::none || !roll(rule.probability)) {
    return false;
  }
  hits_[static_cast<std::size_t>(id)].fetch_add(1, std::memory_order_relaxed);
  if (rule.action == FailAction::delay) {
    std::this_thread::sleep_for(std::chrono::milliseconds(rule.delay_ms));
    return false;
  }
  return true;
}

std::uint64_t Failpoints::hits(FailpointId id) const {
  return hits_[static_cast<std::size_t>(id)].load(std::memory_order_relaxed);
}

FailpointProbe::FailpointProbe(observability::Registry& registry, const Failpoints* failpoints) {
  auto& family = registry.counter("seatflow_failpoint_hits_total", "Injected faults by failpoint.");
  for (std::size_t i = 0; i < kFailpointCount; ++i) {
    hits_[i] = &family.Add({{"name", std::string(to_string(static_cast<FailpointId>(i)))}});
  }
  if (failpoints != nullptr) {
    hook_ = registry.on_scrape([this, failpoints] {
      for (std::size_t i = 0; i < kFailpointCount; ++i) {
        observability::sync_counter(*hits_[i], failpoints->hits(static_cast<FailpointId>(i)));
      }
    });
  }
}

}  // namespace seatflow::persistence

// Renders a RunReport: rates, latency percentiles, status counts, per-callback costs, memory,
// checks.
#include "load/report.hpp"

#include <algorithm>
#include <cmath>

namespace seatflow::bench {
namespace {

double per_s(std::uint64_t count, double seconds) {
  return seconds > 0 ? static_cast<double>(count) / seconds : 0;
}

double ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0;
}

// Deliveries beyond the first of each callback id.
std::uint64_t duplicate_deliveries(const RunReport& r) {
  return r.load.acked > r.distinct_callbacks ? r.load.acked - r.distinct_callbacks : 0;
}

// Cost attributable to duplicates: what exceeds one unit per distinct callback id, divided by the
// deliveries beyond the first of each id (0 when there are none or nothing exceeds).
double per_duplicate(double total, const RunReport& r) {
  const auto dups = duplicate_deliveries(r);
  if (dups == 0) {
    return 0;
  }
  const double extra = total - static_cast<double>(r.distinct_callbacks);
  return extra > 0 ? extra / static_cast<double>(dups) : 0;
}

// PostgreSQL and Redis costs of the run, per callback and per duplicate.
void add_store_costs(const RunReport& r, nlohmann::json& out) {
  const auto& load = r.load;
  if (r.pg) {
    const auto commits = static_cast<double>(r.pg->commits);
    out["pg"] = {{"xact_commit_delta", r.pg->commits},
                 {"xact_rollback_delta", r.pg->rollbacks},
                 {"xid_delta", r.pg->xids},
                 {"commits_per_callback", ratio(commits, static_cast<double>(load.acked))},
                 {"xids_per_callback",
                  ratio(static_cast<double>(r.pg->xids), static_cast<double>(load.acked))},
                 {"commits_per_duplicate", per_duplicate(commits, r)}};
  }
  if (r.redis) {
    const auto calls = static_cast<double>(r.redis->total_calls);
    const auto requests = static_cast<double>(r.redis->requests);
    out["redis"] = {
        {"calls_delta", r.redis->total_calls},
        {"requests_delta", r.redis->requests},
        {"requests_per_callback", ratio(requests, static_cast<double>(load.acked))},
        {"requests_per_duplicate", per_duplicate(requests, r)},
        {"commands_processed_delta", r.redis->commands_processed},
        {"calls_per_callback", ratio(calls, static_cast<double>(load.acked))},
        {"commands_processed_per_callback",
         ratio(static_cast<double>(r.redis->commands_processed), static_cast<double>(load.acked))},
        {"by_command", r.redis->calls}};
  }
}

// "200:1000  503:3  " — every HTTP status with its count; 0 stands for transport errors.
std::string status_text(const std::map<int, std::uint64_t>& counts) {
  std::string text;
  for (const auto& [status, count] : counts) {
    text += (status == 0 ? std::string("transport_error") : std::to_string(status)) + ":" +
            std::to_string(count) + "  ";
  }
  return text;
}

// PostgreSQL and Redis costs and the engine's memory, when they were measured.
void print_server_side(const RunReport& r, std::FILE* out) {
  const auto& load = r.load;
  if (r.pg) {
    const auto commits = static_cast<double>(r.pg->commits);
    std::fprintf(out, "  %-26s %.3f per callback, %.4f per duplicate  (delta %lld, xids %lld)\n",
                 "PostgreSQL xact_commit", ratio(commits, static_cast<double>(load.acked)),
                 per_duplicate(commits, r), static_cast<long long>(r.pg->commits),
                 static_cast<long long>(r.pg->xids));
  }
  if (r.redis) {
    const auto calls = static_cast<double>(r.redis->total_calls);
    std::string by;
    for (const auto& [name, count] : r.redis->calls) {
      by += name + ":" + std::to_string(count) + " ";
    }
    const auto requests = static_cast<double>(r.redis->requests);
    std::fprintf(out, "  %-26s %.3f per callback, %.4f per duplicate\n", "Redis requests (clients)",
                 ratio(requests, static_cast<double>(load.acked)), per_duplicate(requests, r));
    std::fprintf(out, "  %-26s %.3f per callback  (%s)\n", "Redis calls (incl. Lua)",
                 ratio(calls, static_cast<double>(load.acked)), by.c_str());
  }
  if (r.engine_memory) {
    std::fprintf(out, "  %-26s peak %.1f MB (VmHWM), now %.1f MB  (pid %d)\n", "engine RSS",
                 static_cast<double>(r.engine_memory->vm_hwm_kb) / 1024.0,
                 static_cast<double>(r.engine_memory->vm_rss_kb) / 1024.0, r.engine_pid);
  }
}

}  // namespace

bool RunReport::ok() const {
  if (!error.empty() || !load.finished || load.unacked > 0) {
    return false;
  }
  return !checks || checks->ok();
}

double percentile_ms(const std::vector<std::uint32_t>& sorted_us, double pct) {
  if (sorted_us.empty()) {
    return 0;
  }
  const auto n = sorted_us.size();
  auto rank = static_cast<std::size_t>(std::ceil(pct / 100.0 * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  return sorted_us[rank - 1] / 1000.0;
}

// One entry per second of the load: its answers, p50, p99 and max in ms.
nlohmann::json latency_by_second(const LoadResult& load) {
  auto out = nlohmann::json::array();
  for (const auto& second : load.latency_us_by_second) {
    out.push_back({{"answers", second.size()},
                   {"p50", percentile_ms(second, 50)},
                   {"p99", percentile_ms(second, 99)},
                   {"max", second.empty() ? 0.0 : second.back() / 1000.0}});
  }
  return out;
}

nlohmann::json to_json(const RunReport& r) {
  using nlohmann::json;
  const auto& load = r.load;
  json out = {
      {"scenario", r.scenario},
      {"target", r.target},
      {"url", r.url},
      {"run_prefix", r.run_prefix},
      {"payments", r.payments},
      {"duplicates", r.duplicates},
      {"connections", r.connections},
      {"rate_per_s", r.rate_per_s},
      {"prefill_rows", r.prefill_rows},
      {"requests", load.planned_requests},
      {"distinct_callbacks", r.distinct_callbacks},
      {"elapsed_s", load.elapsed_s},
      {"callbacks_per_s", per_s(load.acked, load.elapsed_s)},
      {"answers_per_s", per_s(load.exchanges, load.elapsed_s)},
      {"latency_ms",
       {{"p50", percentile_ms(load.latency_us, 50)},
        {"p95", percentile_ms(load.latency_us, 95)},
        {"p99", percentile_ms(load.latency_us, 99)},
        {"p999", percentile_ms(load.latency_us, 99.9)},
        {"max", load.latency_us.empty() ? 0.0 : load.latency_us.back() / 1000.0}}},
      {"acked", load.acked},
      {"unacked", load.unacked},
      {"retries_503", load.retries_503},
      {"transport_errors", load.transport_errors},
      {"retries_total", load.retries_503 + load.transport_errors},
      {"resigned_bodies", load.resigned},
      {"finished", load.finished},
      {"timed_out", load.timed_out},
      {"abort_reason", load.abort_reason},
      {"acks_per_second", load.acks_per_second},
      {"latency_by_second", latency_by_second(load)},
      {"error", r.error},
      {"ok", r.ok()},
  };
  json statuses = json::object();
  for (const auto& [status, count] : load.status_counts) {
    statuses[status == 0 ? "transport_error" : std::to_string(status)] = count;
  }
  out["status_counts"] = statuses;
  if (r.seed) {
    out["seed"] = {{"seconds", r.seed->seconds}, {"rows", r.seed->rows}, {"seats", r.seed->seats}};
  }
  if (r.prefill) {
    out["prefill"] = {{"seconds", r.prefill->seconds}, {"rows", r.prefill->rows}};
  }
  add_store_costs(r, out);
  if (r.engine_memory) {
    out["engine"] = {{"pid", r.engine_pid},
                     {"vm_hwm_mb", static_cast<double>(r.engine_memory->vm_hwm_kb) / 1024.0},
                     {"vm_rss_mb", static_cast<double>(r.engine_memory->vm_rss_kb) / 1024.0}};
  }
  if (r.checks) {
    json items = json::array();
    for (const auto& item : r.checks->items) {
      items.push_back({{"name", item.name}, {"ok", item.ok}, {"detail", item.detail}});
    }
    out["checks"] = {{"ok", r.checks->ok()}, {"items", items}};
    out["checks_failed"] = std::count_if(r.checks->items.begin(), r.checks->items.end(),
                                         [](const CheckItem& item) { return !item.ok; });
  }
  return out;
}

void print_table(const RunReport& r, std::FILE* out) {
  const auto& load = r.load;
  std::fprintf(out, "\nseatflow-bench  scenario=%s  target=%s  %s  prefix=%s\n", r.scenario.c_str(),
               r.target.c_str(), r.url.c_str(), r.run_prefix.c_str());
  std::fprintf(out, "  %-26s %u payments, %u duplicates, %u connections, rate %s\n", "load",
               r.payments, r.duplicates, r.connections,
               r.rate_per_s > 0
                   ? (std::to_string(static_cast<long long>(r.rate_per_s)) + "/s").c_str()
                   : "unlimited (closed loop)");
  if (r.prefill) {
    std::fprintf(out, "  %-26s %llu rows in %.1f s\n", "prefill",
                 static_cast<unsigned long long>(r.prefill->rows), r.prefill->seconds);
  }
  if (r.seed) {
    std::fprintf(out, "  %-26s %llu rows + %llu seats in %.2f s\n", "seed",
                 static_cast<unsigned long long>(r.seed->rows),
                 static_cast<unsigned long long>(r.seed->seats), r.seed->seconds);
  }
  std::fprintf(out, "  %-26s %llu (%llu distinct callback ids)\n", "deliveries",
               static_cast<unsigned long long>(load.planned_requests),
               static_cast<unsigned long long>(r.distinct_callbacks));
  std::fprintf(out, "  %-26s %.3f\n", "elapsed s", load.elapsed_s);
  std::fprintf(out, "  %-26s %.0f  (HTTP answers/s %.0f)\n", "callbacks/s (ACKed)",
               per_s(load.acked, load.elapsed_s), per_s(load.exchanges, load.elapsed_s));
  std::fprintf(out, "  %-26s p50 %.2f  p95 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n", "latency ms",
               percentile_ms(load.latency_us, 50), percentile_ms(load.latency_us, 95),
               percentile_ms(load.latency_us, 99), percentile_ms(load.latency_us, 99.9),
               load.latency_us.empty() ? 0.0 : load.latency_us.back() / 1000.0);
  const auto statuses = status_text(load.status_counts);
  std::fprintf(out, "  %-26s %s(503 resends %llu, unACKed %llu, re-signed %llu)\n", "status counts",
               statuses.c_str(), static_cast<unsigned long long>(load.retries_503),
               static_cast<unsigned long long>(load.unacked),
               static_cast<unsigned long long>(load.resigned));
  print_server_side(r, out);
  if (r.checks) {
    std::fprintf(out, "  checks\n");
    for (const auto& item : r.checks->items) {
      std::fprintf(out, "    [%s] %s: %s\n", item.ok ? "PASS" : "FAIL", item.name.c_str(),
                   item.detail.c_str());
    }
  }
  if (!load.abort_reason.empty()) {
    std::fprintf(out, "  load stopped: %s\n", load.abort_reason.c_str());
  }
  if (!r.error.empty()) {
    std::fprintf(out, "  error: %s\n", r.error.c_str());
  }
  std::fprintf(out, "  result: %s\n\n", r.ok() ? "OK" : "FAILED");
}

}  // namespace seatflow::bench

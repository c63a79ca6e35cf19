// The renamed settings and the old names' fallback (README "Setting names").
#include "app/setting_names.hpp"

#include <array>

namespace seatflow::app {
namespace {

// Old name → new name; config.cpp's readers ask for the new names only.
constexpr std::array<RenamedSetting, 27> kRenamedSettings{{
    {"SEATFLOW_BODY_LIMIT_BYTES", "SEATFLOW_BODY_BYTES_MAX"},
    {"SEATFLOW_HEADER_LIMIT_BYTES", "SEATFLOW_HEADER_BYTES_MAX"},
    {"SEATFLOW_MAX_CONNECTIONS", "SEATFLOW_CONNECTIONS_MAX"},
    {"SEATFLOW_MAX_INFLIGHT_API", "SEATFLOW_INFLIGHT_API_REQUESTS_MAX"},
    {"SEATFLOW_MAX_INFLIGHT", "SEATFLOW_INFLIGHT_CALLBACKS_MAX"},
    {"SEATFLOW_PAYMENT_MAILBOX", "SEATFLOW_PAYMENT_MAILBOX_CALLBACKS_MAX"},
    {"SEATFLOW_MAX_PAYMENT_ACTORS", "SEATFLOW_PAYMENT_ACTORS_MAX"},
    {"SEATFLOW_SPARE_PAYMENT_ACTORS", "SEATFLOW_SPARE_PAYMENT_ACTORS_MAX"},
    {"SEATFLOW_COMMIT_BATCH", "SEATFLOW_COMMIT_BATCH_CALLBACKS_MAX"},
    {"SEATFLOW_COMMIT_QUEUE", "SEATFLOW_COMMIT_QUEUE_CALLBACKS_MAX"},
    {"SEATFLOW_COMMIT_FILL_MIN", "SEATFLOW_COMMIT_FILL_CALLBACKS_MIN"},
    {"SEATFLOW_COMMIT_FILL_WAIT_US", "SEATFLOW_COMMIT_FILL_WAIT_US_MAX"},
    {"SEATFLOW_PG_KEEPALIVES_COUNT", "SEATFLOW_PG_KEEPALIVE_PROBES_MAX"},
    {"SEATFLOW_SWEEP_BATCH", "SEATFLOW_SWEEP_BATCH_ORDERS_MAX"},
    {"SEATFLOW_RECONCILE_BATCH", "SEATFLOW_RECONCILE_BATCH_ORDERS_MAX"},
    {"SEATFLOW_EVENT_RELAY_BATCH", "SEATFLOW_EVENT_RELAY_BATCH_EVENTS_MAX"},
    {"SEATFLOW_RETENTION_BATCH", "SEATFLOW_RETENTION_BATCH_ROWS_MAX"},
    {"SEATFLOW_QUERY_BATCH", "SEATFLOW_QUERY_BATCH_PAYMENTS_MAX"},
    {"SEATFLOW_EVENT_STREAM_MAXLEN", "SEATFLOW_EVENT_STREAM_ENTRIES_MAX"},
    {"SEATFLOW_API_JWT_MAX_LIFETIME", "SEATFLOW_API_JWT_LIFETIME_MAX"},
    {"SEATFLOW_UNVERIFIED_RATE", "SEATFLOW_UNVERIFIED_TOKENS_PER_S"},
    {"SEATFLOW_UNVERIFIED_BURST", "SEATFLOW_UNVERIFIED_BURST_TOKENS_MAX"},
    {"SEATFLOW_UNVERIFIED_PER_PROXY_RATE", "SEATFLOW_UNVERIFIED_PER_PROXY_TOKENS_PER_S"},
    {"SEATFLOW_UNVERIFIED_PER_PROXY_BURST", "SEATFLOW_UNVERIFIED_PER_PROXY_BURST_TOKENS_MAX"},
    {"SEATFLOW_QUERY_RATE", "SEATFLOW_QUERY_RATE_PER_S"},
    {"SEATFLOW_PG_KEEPALIVES_IDLE_S", "SEATFLOW_PG_KEEPALIVE_IDLE_S"},
    {"SEATFLOW_PG_KEEPALIVES_INTERVAL_S", "SEATFLOW_PG_KEEPALIVE_INTERVAL_S"},
}};

// The warning for an old name in use: one line naming the old and the new name.
std::string renamed_warning(const RenamedSetting& renamed, bool new_name_set) {
  const std::string old_name(renamed.old_name);
  const std::string new_name(renamed.new_name);
  if (new_name_set) {
    return old_name + " is the old name of " + new_name + "; both are set and " + new_name +
           " wins (" + old_name + " is ignored)";
  }
  return old_name + " is the old name of " + new_name + "; it still works, but set " + new_name +
         " instead";
}

}  // namespace

std::span<const RenamedSetting> renamed_settings() {
  return kRenamedSettings;
}

SettingLookup with_old_names(const SettingLookup& lookup, std::vector<std::string>& warnings) {
  for (const auto& renamed : kRenamedSettings) {
    if (lookup(renamed.old_name)) {
      warnings.push_back(renamed_warning(renamed, lookup(renamed.new_name).has_value()));
    }
  }
  return [&lookup](const std::string& name) -> std::optional<std::string> {
    if (auto value = lookup(name)) {
      return value;
    }
    for (const auto& renamed : kRenamedSettings) {
      if (name == renamed.new_name) {
        return lookup(renamed.old_name);
      }
    }
    return std::nullopt;
  };
}

}  // namespace seatflow::app

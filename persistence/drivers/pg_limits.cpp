// DSN defaulting and session set-up text for PostgreSQL connections (pure string work).
#include "persistence/drivers/pg_limits.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

namespace seatflow::persistence {
namespace {

[[nodiscard]] bool is_uri(std::string_view dsn) {
  return dsn.starts_with("postgresql://") || dsn.starts_with("postgres://");
}

[[nodiscard]] bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// The keys of a URI's query string (`?a=1&b=2`).
[[nodiscard]] std::vector<std::string_view> uri_keys(std::string_view dsn) {
  std::vector<std::string_view> keys;
  const auto query = dsn.find('?');
  if (query == std::string_view::npos) {
    return keys;
  }
  auto rest = dsn.substr(query + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const auto pair = rest.substr(0, amp);
    keys.push_back(pair.substr(0, pair.find('=')));
    if (amp == std::string_view::npos) {
      break;
    }
    rest = rest.substr(amp + 1);
  }
  return keys;
}

// The keys of a key=value connection string; values may be single-quoted with backslash escapes.
[[nodiscard]] std::vector<std::string_view> keyword_keys(std::string_view dsn) {
  std::vector<std::string_view> keys;
  std::size_t i = 0;
  while (i < dsn.size()) {
    while (i < dsn.size() && is_space(dsn[i])) {
      ++i;
    }
    const auto key_start = i;
    while (i < dsn.size() && dsn[i] != '=' && !is_space(dsn[i])) {
      ++i;
    }
    if (i > key_start) {
      keys.push_back(dsn.substr(key_start, i - key_start));
    }
    while (i < dsn.size() && is_space(dsn[i])) {
      ++i;
    }
    if (i < dsn.size() && dsn[i] == '=') {
      ++i;
    }
    while (i < dsn.size() && is_space(dsn[i])) {
      ++i;
    }
    if (i < dsn.size() && dsn[i] == '\'') {
      for (++i; i < dsn.size() && dsn[i] != '\''; ++i) {
        if (dsn[i] == '\\') {
          ++i;
        }
      }
      ++i;
    } else {
      while (i < dsn.size() && !is_space(dsn[i])) {
        ++i;
      }
    }
  }
  return keys;
}

[[nodiscard]] std::uint32_t whole_seconds_up(std::uint32_t ms) {
  return (ms + 999) / 1000;
}

}  // namespace

bool dsn_has_parameter(std::string_view dsn, std::string_view key) {
  const auto keys = is_uri(dsn) ? uri_keys(dsn) : keyword_keys(dsn);
  for (const auto k : keys) {
    if (k == key) {
      return true;
    }
  }
  return false;
}

std::string with_connection_defaults(std::string_view dsn, const PgLimits& limits) {
  constexpr std::uint32_t kLibpqMinConnectTimeoutS = 2;
  const std::array<std::pair<std::string_view, std::string>, 7> defaults{{
      {"connect_timeout",
       std::to_string(std::max(kLibpqMinConnectTimeoutS, whole_seconds_up(limits.connect_ms_max)))},
      {"keepalives", "1"},
      {"keepalives_idle", std::to_string(limits.keepalive_idle_s)},
      {"keepalives_interval", std::to_string(limits.keepalive_interval_s)},
      {"keepalives_count", std::to_string(limits.keepalive_probes_max)},
      {"tcp_user_timeout", std::to_string(limits.tcp_unacked_ms_max)},
      {"target_session_attrs", "read-write"},
  }};
  std::string out(dsn);
  const bool uri = is_uri(dsn);
  bool has_query = uri && dsn.find('?') != std::string_view::npos;
  for (const auto& [key, value] : defaults) {
    if (dsn_has_parameter(dsn, key)) {
      continue;
    }
    if (uri) {
      out += has_query ? '&' : '?';
      has_query = true;
    } else if (!out.empty()) {
      out += ' ';
    }
    out.append(key).append("=").append(value);
  }
  return out;
}

std::string session_setup_sql(const PgLimits& limits) {
  return "SET statement_timeout = " + std::to_string(limits.statement_ms_max) +
         "; SET lock_timeout = " + std::to_string(limits.lock_wait_ms_max) +
         "; SET idle_in_transaction_session_timeout = " +
         std::to_string(limits.idle_in_transaction_ms_max) +
         "; SET synchronous_commit = on; SET application_name = 'seatflow'" +
         (limits.connection_check_ms > 0 ? "; SET client_connection_check_interval = " +
                                               std::to_string(limits.connection_check_ms)
                                         : std::string());
}

}  // namespace seatflow::persistence

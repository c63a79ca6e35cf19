// Reads pg_stat_database, INFO commandstats, /proc/<pid>/status and /proc/net/tcp for
// seatflow-bench.
#include "load/probes.hpp"

#include <dirent.h>
#include <unistd.h>

#include <charconv>
#include <climits>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace seatflow::bench {
namespace {

std::uint64_t parse_u64(std::string_view text) {
  std::uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// "key:value" lines of one INFO section body, CRLF separated.
std::map<std::string, std::string> info_fields(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const auto colon = line.find(':');
    if (colon != std::string::npos) {
      out.emplace(line.substr(0, colon), line.substr(colon + 1));
    }
  }
  return out;
}

// Socket inodes listening on `port` in one /proc/net/tcp* table.
void listening_inodes(const std::string& table, std::uint16_t port, std::set<std::string>& out) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
    const auto colon = local.rfind(':');
    if (state != "0A" || colon == std::string::npos) {
      continue;  // 0A is TCP_LISTEN
    }
    unsigned value = 0;
    const auto hex = std::string_view(local).substr(colon + 1);
    std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
    if (value == port && inode != "0") {
      out.insert("socket:[" + inode + "]");
    }
  }
}

bool holds_socket(const std::string& pid, const std::set<std::string>& sockets) {
  const std::string dir = "/proc/" + pid + "/fd";
  DIR* fds = opendir(dir.c_str());
  if (fds == nullptr) {
    return false;
  }
  bool found = false;
  while (const dirent* entry = readdir(fds)) {
    if (entry->d_name[0] == '.') {
      continue;
    }
    char target[PATH_MAX];
    const std::string link = dir + "/" + entry->d_name;
    const auto n = readlink(link.c_str(), target, sizeof(target) - 1);
    if (n > 0 && sockets.count(std::string(target, static_cast<std::size_t>(n))) > 0) {
      found = true;
      break;
    }
  }
  closedir(fds);
  return found;
}

}  // namespace

PgCounters read_pg_counters(pqxx::connection& conn) {
  pqxx::work tx(conn);
  const auto row = tx.exec1(
      "SELECT xact_commit, xact_rollback, pg_snapshot_xmax(pg_current_snapshot())::text::bigint "
      "FROM pg_stat_database WHERE datname = current_database()");
  tx.commit();
  return {row[0].as<std::int64_t>(), row[1].as<std::int64_t>(), row[2].as<std::int64_t>()};
}

std::optional<RedisCounters> read_redis_counters(persistence::RedisClient& redis,
                                                 std::string* why) {
  const auto commandstats = redis.command({"INFO", "commandstats"});
  const auto stats = redis.command({"INFO", "stats"});
  if (!commandstats.ok || !stats.ok) {
    *why = commandstats.ok ? stats.error : commandstats.error;
    return std::nullopt;
  }
  RedisCounters out;
  // cmdstat_evalsha:calls=12,usec=...,usec_per_call=...,rejected_calls=0,failed_calls=0
  for (const auto& [key, value] : info_fields(commandstats.str)) {
    constexpr std::string_view kPrefix = "cmdstat_";
    if (!key.starts_with(kPrefix) || !value.starts_with("calls=")) {
      continue;
    }
    const auto end = value.find(',');
    out.calls[key.substr(kPrefix.size())] = parse_u64(std::string_view(value).substr(6, end - 6));
  }
  const auto fields = info_fields(stats.str);
  if (const auto it = fields.find("total_commands_processed"); it != fields.end()) {
    out.commands_processed = parse_u64(it->second);
  }
  return out;
}

std::map<std::string, std::uint64_t> calls_delta(const RedisCounters& before,
                                                 const RedisCounters& after) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [name, calls] : after.calls) {
    if (name == "info") {
      continue;
    }
    const auto it = before.calls.find(name);
    const auto base = it == before.calls.end() ? 0 : it->second;
    if (calls > base) {
      out[name] = calls - base;
    }
  }
  return out;
}

std::optional<ProcessMemory> read_process_memory(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  if (!in) {
    return std::nullopt;
  }
  ProcessMemory out;
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    const auto value = [&line] {
      const auto digits = line.find_first_of("0123456789");
      return digits == std::string::npos ? 0 : parse_u64(std::string_view(line).substr(digits));
    };
    if (line.starts_with("VmHWM:")) {
      out.vm_hwm_kb = value();
      any = true;
    } else if (line.starts_with("VmRSS:")) {
      out.vm_rss_kb = value();
      any = true;
    }
  }
  if (!any) {
    return std::nullopt;
  }
  return out;
}

std::optional<int> find_listener_pid(std::uint16_t port) {
  std::set<std::string> sockets;
  listening_inodes("/proc/net/tcp", port, sockets);
  listening_inodes("/proc/net/tcp6", port, sockets);
  if (sockets.empty()) {
    return std::nullopt;
  }
  DIR* proc = opendir("/proc");
  if (proc == nullptr) {
    return std::nullopt;
  }
  std::optional<int> best;
  while (const dirent* entry = readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    if (holds_socket(name, sockets)) {
      const int pid = std::stoi(name);
      if (!best || pid < *best) {
        best = pid;
      }
    }
  }
  closedir(proc);
  return best;
}

}  // namespace seatflow::bench

// A blocking hiredis connection with timeouts, reconnect and EVALSHA that reloads on NOSCRIPT.
// Used only from detached actors and command-line tools, never on the cooperative scheduler.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "persistence/drivers/call_watchdog.hpp"
#include "persistence/drivers/failpoints.hpp"

struct redisContext;
struct redisReply;

namespace seatflow::persistence {

struct RedisEndpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  std::string password;
  int db = 0;
};

// Parses redis://[:password@]host[:port][/db]; nullopt with `why` on bad input.
[[nodiscard]] std::optional<RedisEndpoint> parse_redis_url(std::string_view url, std::string* why);

// A reply flattened into plain values; `ok` is false for transport errors and error replies.
struct RedisReply {
  bool ok = false;
  bool is_error_reply = false;  // the server answered with an error (e.g. NOSCRIPT)
  std::string error;            // transport or server error text
  long long integer = 0;
  std::string str;
  std::vector<RedisReply> elements;
  bool is_nil = false;
};

class RedisClient {
 public:
  using Clock = CallWatchdog::Clock;

  // `timeout_ms` bounds the connect and each socket read and write (SO_RCVTIMEO/SO_SNDTIMEO, which
  // hold against a frozen server too); `watchdog` (shared by an engine's connections, null: its
  // own) bounds a whole unit of work armed with watch_call().
  RedisClient(RedisEndpoint endpoint, std::uint32_t timeout_ms, Failpoints* failpoints,
              std::shared_ptr<CallWatchdog> watchdog = nullptr);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Runs one command; reconnects first when the connection is down. Never throws.
  [[nodiscard]] RedisReply command(const std::vector<std::string>& argv);
  // Sends all commands, then reads all replies (one round trip).
  [[nodiscard]] std::vector<RedisReply> pipeline(const std::vector<std::vector<std::string>>& cmds);
  // EVALSHA with the script's digest; when the server lost its script cache (NOSCRIPT: restart,
  // SCRIPT FLUSH) loads the script and sends the call once more (the seat scripts are idempotent).
  [[nodiscard]] RedisReply eval_script(std::string_view script, const std::string& sha1,
                                       const std::vector<std::string>& keys,
                                       const std::vector<std::string>& args);
  [[nodiscard]] bool ping();
  // Arms the deadline of one unit of work: past it the socket is shut down, the blocked call
  // fails, and no reconnect is tried until the scope ends.
  [[nodiscard]] CallScope watch_call(Clock::time_point deadline);

 private:
  bool ensure_connected(std::string* why);
  void disconnect();

  RedisEndpoint endpoint_;
  std::uint32_t timeout_ms_;
  Failpoints* failpoints_;
  std::shared_ptr<CallWatchdog> watchdog_;
  WatchedSocket socket_;
  redisContext* ctx_ = nullptr;
};

// One command in the Redis protocol (RESP): an array of bulk strings, formatted in one pass (what
// hiredis's redisFormatCommandArgv writes, without its per-argument printf-style formatting).
[[nodiscard]] std::string resp_command(const std::vector<std::string>& argv);

// Lowercase hex SHA-1 of a script, the name EVALSHA knows it by.
[[nodiscard]] std::string script_sha1(std::string_view script);

}  // namespace seatflow::persistence

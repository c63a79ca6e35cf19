// A blocking hiredis connection with timeouts, reconnect (through Redis Sentinel when configured)
// and EVALSHA that reloads on NOSCRIPT. Used only from detached actors and command-line tools,
// never on the cooperative scheduler.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "persistence/drivers/call_watchdog.hpp"
#include "persistence/drivers/failpoints.hpp"
#include "persistence/drivers/redis_sentinel.hpp"

struct redisContext;
struct redisReply;

namespace seatflow::persistence {

// Where Redis is: one address, or (sentinels.addresses not empty) the sentinels that name the
// primary; host and port are then unused. The password and db hold for whichever server serves.
struct RedisEndpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  std::string password;
  int db = 0;
  RedisSentinels sentinels;
};

// Parses redis://[:password@]host[:port][/db]; errc::bad_setting (the detail says what is wrong,
// never the password) on bad input.
[[nodiscard]] Result<RedisEndpoint> parse_redis_url(std::string_view url);

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

  // Runs one command; reconnects first when the connection is down (with sentinels: asks them for
  // the primary and checks ROLE before the connection is used). An error reply READONLY or
  // MASTERDOWN drops the connection, so the next call asks the sentinels again. Never throws.
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
  // Counts the connections made so far: a caller that must know its earlier commands reached the
  // server it talks to now (the relay's XADDs before a WAIT) compares two readings.
  [[nodiscard]] std::uint64_t connection_generation() const { return connections_made_; }
  // The server of the current or last connection, "host:port" ("" before the first).
  [[nodiscard]] const std::string& server() const { return server_; }

 private:
  Result<void> ensure_connected();
  // With sentinels, at most every kPrimaryRecheckMs: whether they still name this connection's
  // server (false: it was failed over; the caller reconnects).
  bool still_primary();
  // The address to connect to: the endpoint's, or the primary the sentinels name.
  Result<PrimaryAddress> locate();
  // Connects to `address` and sets the session up (AUTH, SELECT; with sentinels ROLE = master).
  Result<void> open_session(const PrimaryAddress& address);
  // Bookkeeping of a connect attempt: the primary's changes and an outage's length, logged.
  void note_connect(bool connected, const std::string& why);
  void disconnect();

  RedisEndpoint endpoint_;
  std::uint32_t timeout_ms_;
  Failpoints* failpoints_;
  std::shared_ptr<CallWatchdog> watchdog_;
  WatchedSocket socket_;
  redisContext* ctx_ = nullptr;
  std::uint64_t connections_made_ = 0;
  std::string server_;
  // With sentinels: no new attempt before this (a failed one leaves a short gap, so a failover
  // costs each caller one quick refusal rather than a storm of sentinel queries).
  Clock::time_point retry_after_{};
  Clock::time_point recheck_at_{};  // the next still_primary() question to the sentinels
  std::optional<Clock::time_point> down_since_;  // the first failed attempt of an outage
  bool overdue_logged_ = false;
};

// One command in the Redis protocol (RESP): an array of bulk strings, formatted in one pass (what
// hiredis's redisFormatCommandArgv writes, without its per-argument printf-style formatting).
[[nodiscard]] std::string resp_command(const std::vector<std::string>& argv);

// Lowercase hex SHA-1 of a script, the name EVALSHA knows it by.
[[nodiscard]] std::string script_sha1(std::string_view script);

}  // namespace seatflow::persistence

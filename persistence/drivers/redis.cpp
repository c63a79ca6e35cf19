// hiredis wrapper: connection with timeouts, flattened replies, pipelines and EVALSHA.
#include "persistence/drivers/redis.hpp"

#include <hiredis/hiredis.h>
#include <openssl/sha.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "persistence/drivers/log.hpp"

namespace seatflow::persistence {
namespace {

// With sentinels, the gap after a failed connect before the next attempt asks them again.
constexpr std::uint32_t kRediscoverGapMs = 100;
// With sentinels, how often a connection in use asks them whether its server is still the primary.
// A failed-over primary that is still reachable (frozen and thawed, or partitioned from the
// sentinels only) accepts writes until the sentinels demote it; this bounds how long after their
// switch a client keeps writing there.
constexpr std::uint32_t kPrimaryRecheckMs = 1'000;

RedisReply flatten(const redisReply* reply) {
  RedisReply out;
  if (reply == nullptr) {
    out.error = "no reply";
    return out;
  }
  out.ok = true;
  switch (reply->type) {
    case REDIS_REPLY_ERROR:
      out.ok = false;
      out.is_error_reply = true;
      out.error.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_STRING:
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.integer = reply->integer;
      break;
    case REDIS_REPLY_NIL:
      out.is_nil = true;
      break;
    case REDIS_REPLY_ARRAY:
      out.elements.reserve(reply->elements);
      for (std::size_t i = 0; i < reply->elements; ++i) {
        out.elements.push_back(flatten(reply->element[i]));
      }
      break;
    default:
      break;
  }
  return out;
}

void append_command(redisContext* ctx, const std::vector<std::string>& argv) {
  const auto command = resp_command(argv);
  redisAppendFormattedCommand(ctx, command.data(), command.size());
}

void append_decimal(std::string& out, std::size_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

RedisReply transport_error(std::string why) {
  RedisReply out;
  out.error = std::move(why);
  return out;
}

}  // namespace

std::string resp_command(const std::vector<std::string>& argv) {
  // "*<n>\r\n" then "$<len>\r\n<bytes>\r\n" per argument; 16 covers a header's digits and CRLFs.
  std::size_t size = 16;
  for (const auto& arg : argv) {
    size += arg.size() + 16;
  }
  std::string out;
  out.reserve(size);
  out.push_back('*');
  append_decimal(out, argv.size());
  out.append("\r\n");
  for (const auto& arg : argv) {
    out.push_back('$');
    append_decimal(out, arg.size());
    out.append("\r\n");
    out.append(arg);
    out.append("\r\n");
  }
  return out;
}

Result<RedisEndpoint> parse_redis_url(std::string_view url) {
  constexpr std::string_view kScheme = "redis://";
  if (!url.starts_with(kScheme)) {
    return refused(errc::bad_setting, "must start with redis://");
  }
  RedisEndpoint ep;
  auto rest = url.substr(kScheme.size());
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    auto auth = rest.substr(0, at);
    if (const auto colon = auth.find(':'); colon != std::string_view::npos) {
      auth = auth.substr(colon + 1);
    }
    ep.password = std::string(auth);
    rest = rest.substr(at + 1);
  }
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    const auto db = rest.substr(slash + 1);
    if (!db.empty()) {
      const auto [p, ec] = std::from_chars(db.data(), db.data() + db.size(), ep.db);
      if (ec != std::errc{} || p != db.data() + db.size() || ep.db < 0) {
        return refused(errc::bad_setting, "has an invalid database number");
      }
    }
    rest = rest.substr(0, slash);
  }
  if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    const auto port = rest.substr(colon + 1);
    unsigned value = 0;
    const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc{} || p != port.data() + port.size() || value == 0 || value > 65535) {
      return refused(errc::bad_setting, "has an invalid port");
    }
    ep.port = static_cast<std::uint16_t>(value);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) {
    return refused(errc::bad_setting, "has no host");
  }
  ep.host = std::string(rest);
  return ep;
}

std::string script_sha1(std::string_view script) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(script.data()), script.size(), digest);
  std::string hex(2 * SHA_DIGEST_LENGTH, '0');
  constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < SHA_DIGEST_LENGTH; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xF];
  }
  return hex;
}

RedisClient::RedisClient(RedisEndpoint endpoint, std::uint32_t timeout_ms, Failpoints* failpoints,
                         std::shared_ptr<CallWatchdog> watchdog)
    : endpoint_(std::move(endpoint)),
      timeout_ms_(timeout_ms),
      failpoints_(failpoints),
      watchdog_(watchdog ? std::move(watchdog) : std::make_shared<CallWatchdog>()) {}

CallScope RedisClient::watch_call(Clock::time_point deadline) {
  return CallScope(*watchdog_, deadline, socket_);
}

RedisClient::~RedisClient() {
  disconnect();
}

void RedisClient::disconnect() {
  if (ctx_ != nullptr) {
    redisFree(ctx_);
    ctx_ = nullptr;
  }
  socket_.forget();
}

Result<void> RedisClient::ensure_connected() {
  if (watchdog_->aborted()) {
    disconnect();
    return refused(errc::redis_unavailable, "stopping: store calls are aborted");
  }
  // A socket the watchdog cut after its last command still looks healthy to hiredis.
  if (ctx_ != nullptr && ctx_->err == 0 && !socket_.cut() && still_primary()) {
    return {};
  }
  disconnect();
  if (socket_.expired()) {
    return refused(errc::deadline_exceeded, "call deadline passed");
  }
  const bool sentinels = !endpoint_.sentinels.addresses.empty();
  if (sentinels && Clock::now() < retry_after_) {
    return refused(errc::redis_unavailable,
                   "no primary yet: waiting before asking the sentinels again");
  }
  const auto address = locate();
  const auto connected =
      address.ok() ? open_session(address.value()) : Result<void>(address.failure());
  if (connected.ok()) {
    ++connections_made_;
    recheck_at_ = Clock::now() + std::chrono::milliseconds(kPrimaryRecheckMs);
    const auto server = address.value().host + ":" + std::to_string(address.value().port);
    if (sentinels && server != server_) {
      logger().info("event=redis_primary server={} previous={}", server,
                    server_.empty() ? "none" : server_);
    }
    server_ = server;
  }
  note_connect(connected.ok(), connected.ok() ? std::string() : connected.detail());
  if (!connected.ok() && sentinels) {
    retry_after_ = Clock::now() + std::chrono::milliseconds(kRediscoverGapMs);
  }
  return connected;
}

bool RedisClient::still_primary() {
  const auto now = Clock::now();
  if (endpoint_.sentinels.addresses.empty() || now < recheck_at_) {
    return true;
  }
  recheck_at_ = now + std::chrono::milliseconds(kPrimaryRecheckMs);
  const auto named = ask_sentinels(endpoint_.sentinels, timeout_ms_);
  // Sentinels that cannot be asked leave the connection as it is: ROLE vouched for it.
  if (!named.ok() || named.value().host + ":" + std::to_string(named.value().port) == server_) {
    return true;
  }
  logger().warn("event=redis_primary_moved server={} named={}:{}", server_, named.value().host,
                named.value().port);
  return false;
}

Result<PrimaryAddress> RedisClient::locate() {
  if (endpoint_.sentinels.addresses.empty()) {
    return PrimaryAddress{endpoint_.host, endpoint_.port};
  }
  return ask_sentinels(endpoint_.sentinels, timeout_ms_);
}

Result<void> RedisClient::open_session(const PrimaryAddress& address) {
  const timeval tv{static_cast<time_t>(timeout_ms_ / 1000),
                   static_cast<suseconds_t>((timeout_ms_ % 1000) * 1000)};
  ctx_ = redisConnectWithTimeout(address.host.c_str(), address.port, tv);
  if (ctx_ == nullptr || ctx_->err != 0) {
    auto why =
        ctx_ == nullptr ? "cannot allocate redis context" : std::string("connect: ") + ctx_->errstr;
    disconnect();
    return refused(errc::redis_unavailable, std::move(why));
  }
  redisSetTimeout(ctx_, tv);
  socket_.watch(ctx_->fd);
  std::vector<std::vector<std::string>> setup;
  if (!endpoint_.password.empty()) {
    setup.push_back({"AUTH", endpoint_.password});
  }
  if (endpoint_.db != 0) {
    setup.push_back({"SELECT", std::to_string(endpoint_.db)});
  }
  if (!endpoint_.sentinels.addresses.empty()) {
    setup.push_back({"ROLE"});  // the sentinels' answer may be stale: the server itself decides
  }
  for (const auto& cmd : setup) {
    append_command(ctx_, cmd);
    redisReply* raw = nullptr;
    if (redisGetReply(ctx_, reinterpret_cast<void**>(&raw)) != REDIS_OK) {
      disconnect();
      return refused(errc::redis_unavailable, "connection set-up failed");
    }
    const auto reply = flatten(raw);
    freeReplyObject(raw);
    if (!reply.ok) {
      disconnect();
      return refused(errc::redis_unavailable,
                     cmd[0] == "AUTH" ? "AUTH refused" : cmd[0] + " refused: " + reply.error);
    }
    if (cmd[0] == "ROLE" && (reply.elements.empty() || reply.elements[0].str != "master")) {
      disconnect();
      return refused(errc::redis_unavailable,
                     "ROLE of " + address.host + ":" + std::to_string(address.port) + " is " +
                         (reply.elements.empty() ? std::string("unknown") : reply.elements[0].str) +
                         ", not master");
    }
  }
  return {};
}

void RedisClient::note_connect(bool connected, const std::string& why) {
  if (endpoint_.sentinels.addresses.empty()) {
    return;
  }
  const auto now = Clock::now();
  if (!connected) {
    if (!down_since_) {
      down_since_ = now;
      logger().warn("event=redis_primary_lost error={}", quoted_value(why));
    }
    const auto down_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - *down_since_).count();
    if (!overdue_logged_ && down_ms > endpoint_.sentinels.failover_timeout_ms) {
      overdue_logged_ = true;
      logger().error("event=redis_failover_overdue down_ms={} failover_timeout_ms={} error={}",
                     down_ms, endpoint_.sentinels.failover_timeout_ms, quoted_value(why));
    }
    return;
  }
  if (down_since_) {
    logger().info(
        "event=redis_primary_followed server={} down_ms={}", server_,
        std::chrono::duration_cast<std::chrono::milliseconds>(now - *down_since_).count());
  }
  down_since_.reset();
  overdue_logged_ = false;
}

std::vector<RedisReply> RedisClient::pipeline(const std::vector<std::vector<std::string>>& cmds) {
  std::vector<RedisReply> out;
  out.reserve(cmds.size());
  std::string why;
  if (failpoints_ != nullptr && failpoints_->hit(FailpointId::redis)) {
    why = "failpoint redis";
  } else if (auto connected = ensure_connected(); !connected.ok()) {
    why = connected.detail();
  } else {
    for (const auto& cmd : cmds) {
      append_command(ctx_, cmd);
    }
    for (std::size_t i = 0; i < cmds.size(); ++i) {
      redisReply* raw = nullptr;
      if (redisGetReply(ctx_, reinterpret_cast<void**>(&raw)) != REDIS_OK) {
        why = std::string("io: ") + ctx_->errstr;
        disconnect();
        break;
      }
      out.push_back(flatten(raw));
      freeReplyObject(raw);
    }
    // A server that is no writable primary (a replica now, or one that lost its primary): the
    // next call connects again, asking the sentinels where the primary went.
    const bool not_primary = std::any_of(out.begin(), out.end(), [](const RedisReply& r) {
      return r.is_error_reply && is_not_primary_reply(r.error);
    });
    if (not_primary && ctx_ != nullptr) {
      disconnect();
    }
  }
  while (out.size() < cmds.size()) {
    out.push_back(transport_error(why));
  }
  return out;
}

RedisReply RedisClient::command(const std::vector<std::string>& argv) {
  return std::move(pipeline({argv}).front());
}

RedisReply RedisClient::eval_script(std::string_view script, const std::string& sha1,
                                    const std::vector<std::string>& keys,
                                    const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.emplace_back("EVALSHA");
  argv.push_back(sha1);
  argv.push_back(std::to_string(keys.size()));
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  auto reply = command(argv);
  if (reply.is_error_reply && reply.error.starts_with("NOSCRIPT") &&
      command({"SCRIPT", "LOAD", std::string(script)}).ok) {
    reply = command(argv);
  }
  return reply;
}

bool RedisClient::ping() {
  const auto reply = command({"PING"});
  return reply.ok && reply.str == "PONG";
}

}  // namespace seatflow::persistence

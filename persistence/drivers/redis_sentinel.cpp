// Redis Sentinel: parsing SEATFLOW_REDIS_SENTINELS and asking the sentinels for the primary.
#include "persistence/drivers/redis_sentinel.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <memory>

namespace seatflow::persistence {
namespace {

struct ContextFree {
  void operator()(redisContext* ctx) const { redisFree(ctx); }
};
struct ReplyFree {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};

std::optional<std::uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || p != text.data() + text.size() || value == 0 || value > 65535) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(value);
}

// One "host:port" (or "[v6]:port") entry.
Result<SentinelAddress> parse_one(std::string_view entry) {
  const auto colon = entry.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return refused(errc::bad_setting, "entry '" + std::string(entry) + "' must be host:port");
  }
  auto host = entry.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const auto port = parse_port(entry.substr(colon + 1));
  if (host.empty() || !port) {
    return refused(errc::bad_setting,
                   "entry '" + std::string(entry) + "' has no host or an invalid port");
  }
  return SentinelAddress{std::string(host), *port};
}

std::string reply_text(const redisReply* reply) {
  return reply->str != nullptr ? std::string(reply->str, reply->len) : std::string();
}

// One sentinel's answer: the primary it names, or why not.
Result<PrimaryAddress> ask_one(const SentinelAddress& sentinel, const std::string& name,
                               std::uint32_t call_ms) {
  const timeval tv{static_cast<time_t>(call_ms / 1000),
                   static_cast<suseconds_t>((call_ms % 1000) * 1000)};
  const std::unique_ptr<redisContext, ContextFree> ctx(
      redisConnectWithTimeout(sentinel.host.c_str(), sentinel.port, tv));
  if (ctx == nullptr || ctx->err != 0) {
    return refused(errc::redis_unavailable, ctx == nullptr
                                                ? "cannot allocate a context"
                                                : std::string("connect: ") + ctx->errstr);
  }
  redisSetTimeout(ctx.get(), tv);
  const char* argv[] = {"SENTINEL", "get-master-addr-by-name", name.c_str()};
  const std::size_t lengths[] = {8, 23, name.size()};
  const std::unique_ptr<redisReply, ReplyFree> reply(
      static_cast<redisReply*>(redisCommandArgv(ctx.get(), 3, argv, lengths)));
  if (reply == nullptr) {
    return refused(errc::redis_unavailable, std::string("io: ") + ctx->errstr);
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    return refused(errc::redis_unavailable, reply_text(reply.get()));
  }
  if (reply->type == REDIS_REPLY_NIL) {
    return refused(errc::redis_unavailable, "knows no primary named " + name);
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
      reply->element[0]->type != REDIS_REPLY_STRING ||
      reply->element[1]->type != REDIS_REPLY_STRING) {
    return refused(errc::redis_unavailable, "unexpected reply");
  }
  const auto port = parse_port(reply_text(reply->element[1]));
  if (!port) {
    return refused(errc::redis_unavailable, "named an invalid port");
  }
  return PrimaryAddress{reply_text(reply->element[0]), *port};
}

}  // namespace

Result<std::vector<SentinelAddress>> parse_sentinels(std::string_view list) {
  std::vector<SentinelAddress> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto entry = list.substr(0, comma);
    if (out.size() == kSentinelsMax) {
      return refused(errc::bad_setting,
                     "names more than " + std::to_string(kSentinelsMax) + " sentinels");
    }
    auto address = parse_one(entry);
    if (!address.ok()) {
      return std::move(address).failure();
    }
    out.push_back(std::move(address).value());
    if (comma == std::string_view::npos) {
      break;
    }
    list.remove_prefix(comma + 1);
    if (list.empty()) {
      return refused(errc::bad_setting, "ends with a comma");
    }
  }
  if (out.empty()) {
    return refused(errc::bad_setting, "names no sentinel");
  }
  return out;
}

bool valid_master_name(std::string_view name) {
  return !name.empty() && name.size() <= kSentinelMasterNameBytesMax &&
         std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

Result<PrimaryAddress> ask_sentinels(const RedisSentinels& sentinels, std::uint32_t timeout_ms) {
  const auto call_ms = std::min(timeout_ms, kSentinelCallMsMax);
  std::string reasons;
  for (const auto& sentinel : sentinels.addresses) {
    auto primary = ask_one(sentinel, sentinels.master_name, call_ms);
    if (primary.ok()) {
      return primary;
    }
    reasons += (reasons.empty() ? "" : "; ") + sentinel.host + ":" + std::to_string(sentinel.port) +
               " " + primary.detail();
  }
  return refused(errc::redis_unavailable, "no sentinel named the primary (" + reasons + ")");
}

bool is_not_primary_reply(std::string_view error) {
  return error.starts_with("READONLY") || error.starts_with("MASTERDOWN");
}

}  // namespace seatflow::persistence

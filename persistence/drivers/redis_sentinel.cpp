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
std::optional<SentinelAddress> parse_one(std::string_view entry, std::string* why) {
  const auto colon = entry.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    *why = "entry '" + std::string(entry) + "' must be host:port";
    return std::nullopt;
  }
  auto host = entry.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const auto port = parse_port(entry.substr(colon + 1));
  if (host.empty() || !port) {
    *why = "entry '" + std::string(entry) + "' has no host or an invalid port";
    return std::nullopt;
  }
  return SentinelAddress{std::string(host), *port};
}

std::string reply_text(const redisReply* reply) {
  return reply->str != nullptr ? std::string(reply->str, reply->len) : std::string();
}

// One sentinel's answer: the primary it names, or nullopt with the reason in `why`.
std::optional<PrimaryAddress> ask_one(const SentinelAddress& sentinel, const std::string& name,
                                      std::uint32_t call_ms, std::string* why) {
  const timeval tv{static_cast<time_t>(call_ms / 1000),
                   static_cast<suseconds_t>((call_ms % 1000) * 1000)};
  const std::unique_ptr<redisContext, ContextFree> ctx(
      redisConnectWithTimeout(sentinel.host.c_str(), sentinel.port, tv));
  if (ctx == nullptr || ctx->err != 0) {
    *why = ctx == nullptr ? "cannot allocate a context" : std::string("connect: ") + ctx->errstr;
    return std::nullopt;
  }
  redisSetTimeout(ctx.get(), tv);
  const char* argv[] = {"SENTINEL", "get-master-addr-by-name", name.c_str()};
  const std::size_t lengths[] = {8, 23, name.size()};
  const std::unique_ptr<redisReply, ReplyFree> reply(
      static_cast<redisReply*>(redisCommandArgv(ctx.get(), 3, argv, lengths)));
  if (reply == nullptr) {
    *why = std::string("io: ") + ctx->errstr;
    return std::nullopt;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    *why = reply_text(reply.get());
    return std::nullopt;
  }
  if (reply->type == REDIS_REPLY_NIL) {
    *why = "knows no primary named " + name;
    return std::nullopt;
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
      reply->element[0]->type != REDIS_REPLY_STRING ||
      reply->element[1]->type != REDIS_REPLY_STRING) {
    *why = "unexpected reply";
    return std::nullopt;
  }
  const auto port = parse_port(reply_text(reply->element[1]));
  if (!port) {
    *why = "named an invalid port";
    return std::nullopt;
  }
  return PrimaryAddress{reply_text(reply->element[0]), *port};
}

}  // namespace

Result<std::vector<SentinelAddress>> parse_sentinels(std::string_view list) {
  std::vector<SentinelAddress> out;
  std::string why;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto entry = list.substr(0, comma);
    if (out.size() == kSentinelsMax) {
      return refused(errc::bad_setting,
                     "names more than " + std::to_string(kSentinelsMax) + " sentinels");
    }
    auto address = parse_one(entry, &why);
    if (!address) {
      return refused(errc::bad_setting, why);
    }
    out.push_back(std::move(*address));
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

std::optional<PrimaryAddress> ask_sentinels(const RedisSentinels& sentinels,
                                            std::uint32_t timeout_ms, std::string* why) {
  const auto call_ms = std::min(timeout_ms, kSentinelCallMsMax);
  std::string reasons;
  for (const auto& sentinel : sentinels.addresses) {
    std::string reason;
    if (auto primary = ask_one(sentinel, sentinels.master_name, call_ms, &reason)) {
      return primary;
    }
    reasons += (reasons.empty() ? "" : "; ") + sentinel.host + ":" + std::to_string(sentinel.port) +
               " " + reason;
  }
  *why = "no sentinel named the primary (" + reasons + ")";
  return std::nullopt;
}

bool is_not_primary_reply(std::string_view error) {
  return error.starts_with("READONLY") || error.starts_with("MASTERDOWN");
}

}  // namespace seatflow::persistence

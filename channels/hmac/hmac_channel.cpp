// The `hmac` dialect: JSON shape checks and HMAC-SHA256 verification with reused OpenSSL contexts.
#include "channels/hmac/hmac_channel.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "codec/crypto.hpp"
#include "codec/digest.hpp"
#include "codec/json_members.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {

namespace {

using nlohmann::json;

constexpr std::size_t kMacBytes = 32;  // SHA-256 output
constexpr std::size_t kSignHexChars = kMacBytes * 2;
// A thread keeps context copies for at most this many channels; a miss beyond it only costs a dup.
constexpr std::size_t kMaxThreadSlots = 16;

using MacBytes = std::array<unsigned char, kMacBytes>;

// One thread's private copies of one channel's keyed contexts. An EVP_MAC_CTX is not thread-safe,
// so each thread computes on its own copies; the channel keeps only the pre-keyed templates.
struct ThreadSlot {
  std::uint64_t instance = 0;
  std::weak_ptr<const int> alive;          // expires when the channel is destroyed
  std::vector<codec::MacCtxPtr> contexts;  // one per secret, in configuration order
};

// True only while this thread's cache exists. Trivially destructible, so a channel destroyed
// after the thread's cache (a static destroyed at exit) can still ask safely.
thread_local bool t_cache_live = false;

// Per-thread cache by design (the hot path must not lock); bounded by kMaxThreadSlots.
struct ThreadCache {
  ThreadCache() { t_cache_live = true; }
  ~ThreadCache() { t_cache_live = false; }
  ThreadCache(const ThreadCache&) = delete;
  ThreadCache& operator=(const ThreadCache&) = delete;
  std::vector<ThreadSlot> slots;
};
thread_local ThreadCache t_cache;
// Instance numbers are never reused, so a stale slot can never be mistaken for a new channel.
std::atomic<std::uint64_t> g_next_instance{1};

// The fields of one callback body, after the shape checks and before the signature check.
struct CallbackFields {
  std::string callback_id;
  std::string payment_no;
  std::int64_t status = 0;
  std::int64_t timestamp_ms = 0;
  // The decoded sign; sign_is_hex is false when it was not exactly 64 hex characters.
  bool sign_is_hex = false;
  MacBytes sign{};
};

// Ids are bounded, non-empty and free of control bytes: a newline inside an id would make the
// newline-joined canonical string ambiguous (and could forge log lines downstream).
bool valid_id(std::string_view id) {
  return domain::valid_id(id, domain::IdRule::printable_bytes);
}

// The five members the dialect reads, collected in one pass over the body: no document is built,
// and only these members' strings are kept (a duplicate's CPU, docs/BENCHMARKS.md).
enum Field : std::size_t { kCallbackId, kPaymentNo, kStatus, kTimestamp, kSign, kFieldCount };
constexpr std::array<std::string_view, kFieldCount> kFieldNames{"callbackId", "paymentNo", "status",
                                                                "timestamp", "sign"};

// Reads one string id member; on failure `detail` names the field and the problem, never the
// value.
std::optional<std::string> hmac_id_member(codec::JsonMember& member, std::string_view name,
                                          std::string& detail) {
  if (member.kind != codec::JsonMember::Kind::string) {
    detail = std::string(name) + " missing or not a string";
    return std::nullopt;
  }
  if (!valid_id(member.text)) {
    detail = std::string(name) + " empty, too long or has control characters";
    return std::nullopt;
  }
  return std::move(member.text);
}

// Decodes exactly 64 hex characters of either case; false for any other length or character.
bool decode_sign(std::string_view hex, MacBytes& out) {
  if (hex.size() != kSignHexChars) {
    return false;
  }
  int invalid = 0;  // negative once any character was not a hex digit: one branch, at the end
  for (std::size_t i = 0; i < kMacBytes; ++i) {
    const int high = codec::hex_digit_value(hex[2 * i]);
    const int low = codec::hex_digit_value(hex[2 * i + 1]);
    invalid |= high | low;
    out[i] =
        static_cast<unsigned char>(static_cast<unsigned>(high) << 4U | static_cast<unsigned>(low));
  }
  return invalid >= 0;
}

Result<CallbackFields> parse_fields(std::string_view body) {
  std::array<codec::JsonMember, kFieldCount> members;
  if (!codec::read_json_members(body, kFieldNames, members)) {
    return reject(RejectReason::malformed, "body is not a JSON object");
  }
  std::string detail;
  auto callback_id = hmac_id_member(members[kCallbackId], "callbackId", detail);
  if (!callback_id) {
    return reject(RejectReason::malformed, detail);
  }
  auto payment_no = hmac_id_member(members[kPaymentNo], "paymentNo", detail);
  if (!payment_no) {
    return reject(RejectReason::malformed, detail);
  }
  const auto& status = members[kStatus];
  if (status.kind != codec::JsonMember::Kind::int64) {
    return reject(RejectReason::malformed, "status missing or not an integer");
  }
  const auto& timestamp = members[kTimestamp];
  if (timestamp.kind != codec::JsonMember::Kind::int64) {
    return reject(RejectReason::malformed, "timestamp missing or not an integer");
  }
  const auto& sign = members[kSign];
  if (sign.kind != codec::JsonMember::Kind::string) {
    return reject(RejectReason::malformed, "sign missing or not a string");
  }
  CallbackFields fields{std::move(*callback_id), std::move(*payment_no), status.value,
                        timestamp.value};
  fields.sign_is_hex = decode_sign(sign.text, fields.sign);
  return fields;
}

// Writes "\n" status "\n" timestamp into `tail`; the length written, or 0 when it does not fit.
std::size_t format_tail(std::array<char, 48>& tail, std::int64_t status,
                        std::int64_t timestamp_ms) {
  char* const end = tail.data() + tail.size();
  char* cursor = tail.data();
  for (const std::int64_t value : {status, timestamp_ms}) {
    if (cursor == end) {
      return 0;
    }
    *cursor++ = '\n';
    const auto result = std::to_chars(cursor, end, value);
    if (result.ec != std::errc{}) {
      return 0;
    }
    cursor = result.ptr;
  }
  return static_cast<std::size_t>(cursor - tail.data());
}

// HMAC over callbackId "\n" paymentNo "\n" status "\n" timestamp, fed in pieces (no allocation).
bool compute_mac(EVP_MAC_CTX* ctx, std::string_view callback_id, std::string_view payment_no,
                 std::int64_t status, std::int64_t timestamp_ms, MacBytes& out) {
  // Two newlines and two int64 values of at most 20 characters each always fit.
  std::array<char, 48> tail{};
  const std::size_t tail_size = format_tail(tail, status, timestamp_ms);
  if (tail_size == 0) {
    return false;
  }
  const std::string_view tail_view(tail.data(), tail_size);
  constexpr std::string_view kNewline = "\n";
  std::size_t out_len = 0;
  // A NULL key re-initialises the context with the key it already holds (no re-keying cost).
  return EVP_MAC_init(ctx, nullptr, 0, nullptr) == 1 &&
         EVP_MAC_update(ctx, codec::bytes_of(callback_id), callback_id.size()) == 1 &&
         EVP_MAC_update(ctx, codec::bytes_of(kNewline), kNewline.size()) == 1 &&
         EVP_MAC_update(ctx, codec::bytes_of(payment_no), payment_no.size()) == 1 &&
         EVP_MAC_update(ctx, codec::bytes_of(tail_view), tail_view.size()) == 1 &&
         EVP_MAC_final(ctx, out.data(), &out_len, out.size()) == 1 && out_len == kMacBytes;
}

// |now - timestamp| <= window, computed in unsigned arithmetic so no input can overflow.
bool within_window(std::int64_t now_ms, std::int64_t timestamp_ms, std::int64_t window_ms) {
  const auto now = static_cast<std::uint64_t>(now_ms);
  const auto stamp = static_cast<std::uint64_t>(timestamp_ms);
  const std::uint64_t distance = now_ms >= timestamp_ms ? now - stamp : stamp - now;
  return distance <= static_cast<std::uint64_t>(window_ms);
}

std::optional<domain::CallbackKind> hmac_kind_of(std::int64_t status) {
  if (status == 1) {
    return domain::CallbackKind::success;
  }
  if (status == 2) {
    return domain::CallbackKind::failure;
  }
  return std::nullopt;
}

}  // namespace

struct HmacChannel::Impl {
  std::int64_t window_ms = 0;
  std::vector<codec::MacCtxPtr> keyed;  // pre-keyed templates, one per secret; never computed on
  std::uint64_t instance = g_next_instance.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<const int> alive = std::make_shared<const int>(0);
  // Serialises EVP_MAC_CTX_dup of the shared templates; taken only when a thread first uses us.
  mutable std::mutex dup_mutex;

  [[nodiscard]] std::span<const codec::MacCtxPtr> thread_contexts() const;
  [[nodiscard]] std::span<const codec::MacCtxPtr> add_thread_slot() const;
  [[nodiscard]] bool matches_any(const CallbackFields& fields) const;
};

std::span<const codec::MacCtxPtr> HmacChannel::Impl::thread_contexts() const {
  for (const auto& slot : t_cache.slots) {
    if (slot.instance == instance) {
      return slot.contexts;
    }
  }
  return add_thread_slot();
}

std::span<const codec::MacCtxPtr> HmacChannel::Impl::add_thread_slot() const {
  std::erase_if(t_cache.slots, [](const ThreadSlot& slot) { return slot.alive.expired(); });
  if (t_cache.slots.size() >= kMaxThreadSlots) {
    t_cache.slots.erase(t_cache.slots.begin());
  }
  ThreadSlot slot{instance, alive, {}};
  slot.contexts.reserve(keyed.size());
  {
    const std::lock_guard lock(dup_mutex);
    for (const auto& templ : keyed) {
      codec::MacCtxPtr copy(EVP_MAC_CTX_dup(templ.get()));
      if (!copy) {
        throw std::bad_alloc();
      }
      slot.contexts.push_back(std::move(copy));
    }
  }
  t_cache.slots.push_back(std::move(slot));
  return t_cache.slots.back().contexts;
}

bool HmacChannel::Impl::matches_any(const CallbackFields& fields) const {
  for (const auto& ctx : thread_contexts()) {
    MacBytes expected{};
    if (!compute_mac(ctx.get(), fields.callback_id, fields.payment_no, fields.status,
                     fields.timestamp_ms, expected)) {
      throw std::runtime_error("hmac channel: HMAC-SHA256 computation failed");
    }
    if (CRYPTO_memcmp(expected.data(), fields.sign.data(), kMacBytes) == 0) {
      return true;
    }
  }
  return false;
}

std::string hmac_canonical(std::string_view callback_id, std::string_view payment_no, int status,
                           std::int64_t timestamp_ms) {
  std::string canonical;
  canonical.reserve(callback_id.size() + payment_no.size() + 40);
  canonical.append(callback_id);
  canonical.push_back('\n');
  canonical.append(payment_no);
  canonical.push_back('\n');
  canonical.append(std::to_string(status));
  canonical.push_back('\n');
  canonical.append(std::to_string(timestamp_ms));
  return canonical;
}

HmacChannel::HmacChannel(HmacConfig config) : impl_(std::make_unique<Impl>()) {
  if (config.secrets.empty()) {
    throw std::invalid_argument("hmac channel: no secret configured");
  }
  if (config.window_ms < 0) {
    throw std::invalid_argument("hmac channel: negative timestamp window");
  }
  impl_->window_ms = config.window_ms;
  for (auto& secret : config.secrets) {
    if (secret.empty()) {
      throw std::invalid_argument("hmac channel: empty secret");
    }
    impl_->keyed.push_back(codec::keyed_hmac_sha256(secret));
    // The keyed contexts hold the key from here on; do not keep another copy of it around.
    OPENSSL_cleanse(secret.data(), secret.size());
  }
}

HmacChannel::~HmacChannel() {
  // Other threads drop their copies lazily (their slot's weak_ptr expires); drop ours now.
  if (!t_cache_live) {
    return;
  }
  const std::uint64_t instance = impl_->instance;
  std::erase_if(t_cache.slots,
                [instance](const ThreadSlot& slot) { return slot.instance == instance; });
}

Result<domain::VerifiedCallback> HmacChannel::verify(const InboundRequest& request) const {
  auto parsed = parse_fields(request.body);
  if (!parsed.ok()) {
    return std::move(parsed).failure();
  }
  auto& fields = parsed.value();
  if (!fields.sign_is_hex) {
    return reject(RejectReason::bad_signature, "sign is not 64 hex characters");
  }
  if (!impl_->matches_any(fields)) {
    return reject(RejectReason::bad_signature, "signature does not verify under any secret");
  }
  if (!request.freshness_waived &&
      !within_window(request.now_ms, fields.timestamp_ms, impl_->window_ms)) {
    return reject_stale(request.now_ms, fields.timestamp_ms);
  }
  const auto kind = hmac_kind_of(fields.status);
  if (!kind) {
    return reject(RejectReason::bad_status, "status must be 1 or 2");
  }
  domain::VerifiedCallback callback;
  callback.callback_id = std::move(fields.callback_id);
  callback.payment_no = std::move(fields.payment_no);
  callback.channel = domain::Channel::hmac;
  callback.kind = *kind;
  callback.payload_sha256 = codec::business_digest(callback);
  return callback;
}

std::string HmacChannel::failure_body(std::string_view message) const {
  return std::string(message);
}

std::string HmacChannel::sign(std::string_view callback_id, std::string_view payment_no, int status,
                              std::int64_t timestamp_ms) const {
  const auto contexts = impl_->thread_contexts();
  MacBytes mac{};
  if (!compute_mac(contexts.front().get(), callback_id, payment_no, status, timestamp_ms, mac)) {
    throw std::runtime_error("hmac channel: HMAC-SHA256 computation failed");
  }
  return codec::to_lower_hex(
      std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

std::string HmacChannel::signed_body(std::string_view callback_id, std::string_view payment_no,
                                     int status, std::int64_t timestamp_ms) const {
  json body = json::object();
  body["callbackId"] = std::string(callback_id);
  body["paymentNo"] = std::string(payment_no);
  body["status"] = status;
  body["timestamp"] = timestamp_ms;
  body["sign"] = sign(callback_id, payment_no, status, timestamp_ms);
  return body.dump();
}

}  // namespace seatflow::channels

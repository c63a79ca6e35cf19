// libFuzzer target: the wechat header checks and verify() with a throwaway key, the notification
// and transaction parsers behind the signature, base64 and AES-GCM opening on arbitrary bytes.
// Input: optional "name: value" header lines, a blank line, then the body.
#include <algorithm>
#include <string>

#include "channels/text.hpp"
#include "channels/wechat_channel.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace seatflow;

const channels::WechatRules kRules{"1900000001", "0123456789abcdef0123456789abcdef"};

const channels::WechatChannel& channel() {
  static const channels::WechatChannel instance(
      kRules, channels::WechatPlatformKeys{{"SERIAL-1", fuzz::throwaway_key()}});
  return instance;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c + 32);
    }
  }
  return out;
}

// Splits "k: v\n...\n\nbody" into lower-cased headers and the body (all body when no blank line).
std::string_view split(std::string_view input, channels::Headers& headers) {
  const auto blank = input.find("\n\n");
  if (blank == std::string_view::npos) {
    return input;
  }
  std::size_t start = 0;
  while (start < blank) {
    const auto end = std::min(input.find('\n', start), blank);
    const auto line = input.substr(start, end - start);
    const auto colon = line.find(": ");
    if (colon != std::string_view::npos) {
      headers[lower(line.substr(0, colon))] = std::string(line.substr(colon + 2));
    }
    start = end + 1;
  }
  return input.substr(blank + 2);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = fuzz::as_text(data, size);
  channels::Headers headers;
  const auto body = split(input, headers);
  const auto result = channel().verify(channels::InboundRequest{body, &headers, fuzz::kNowMs});
  fuzz::check_result(result);
  fuzz::require(std::holds_alternative<channels::Rejection>(result),
                "a fuzzed notification verified under a throwaway key");
  // What a validly signed body would reach: the resource, then (decrypted) the transaction.
  fuzz::check_result(channels::wechat_callback_from_body(body, kRules));
  const auto transaction = channels::parse_wechat_transaction(input, kRules.mchid);
  if (const auto* callback = std::get_if<domain::VerifiedCallback>(&transaction)) {
    fuzz::require(channels::is_valid_id(callback->payment_no), "payment number not a valid id");
  }
  if (const auto decoded = channels::base64_decode(body, 4096)) {
    fuzz::require(decoded->size() <= 4096 && decoded->size() <= body.size(), "base64 overrun");
  }
  if (size > 12) {
    (void)channels::aes256gcm_open(kRules.apiv3_key, input.substr(0, 12), "", input.substr(12));
  }
  return 0;
}

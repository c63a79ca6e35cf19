// libFuzzer target: the wechat header checks and verify() with a throwaway key, the notification
// and transaction parsers behind the signature, base64 and AES-GCM opening on arbitrary bytes.
// Input: optional "name: value" header lines, a blank line, then the body.
#include <string>

#include "channels/wechat/wechat_channel.hpp"
#include "codec/text.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace seatflow;

const channels::WechatRules kRules{"1900000001", "0123456789abcdef0123456789abcdef"};

const channels::WechatChannel& channel() {
  static const channels::WechatChannel instance(
      kRules, channels::WechatPlatformKeys{{"SERIAL-1", fuzz::throwaway_key()}});
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = fuzz::as_text(data, size);
  codec::Headers headers;
  const auto body = fuzz::verify_unsigned(channel(), input, headers);
  // What a validly signed body would reach: the resource, then (decrypted) the transaction.
  fuzz::check_result(channels::wechat_callback_from_body(body, kRules));
  const auto transaction = channels::parse_wechat_transaction(input, kRules.mchid);
  if (const auto* callback = (transaction.ok() ? &transaction.value() : nullptr)) {
    fuzz::require(codec::is_valid_id(callback->payment_no), "payment number not a valid id");
  }
  if (const auto decoded = codec::base64_decode(body, 4096)) {
    fuzz::require(decoded->size() <= 4096 && decoded->size() <= body.size(), "base64 overrun");
  }
  if (size > 12) {
    (void)codec::aes256gcm_open(kRules.apiv3_key, input.substr(0, 12), "", input.substr(12));
  }
  return 0;
}

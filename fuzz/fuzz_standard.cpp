// libFuzzer target: the standard (Standard Webhooks) channel on arbitrary headers and bodies, the
// webhook-signature parser and secret decoding on arbitrary text, and the event mapping behind a
// signature the harness makes itself. Input: optional "Name: value" lines, a blank line, the body.
#include <string>

#include "channels/standard/standard_channel.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace seatflow;

const channels::StandardChannel& channel() {
  static const channels::StandardChannel instance(channels::StandardConfig{
      {"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_ZnV6ei1yb3RhdGVkLWtleQ"}, 300'000});
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = fuzz::as_text(data, size);
  codec::Headers headers;
  const auto body = fuzz::verify_unsigned(channel(), input, headers);
  const auto timestamp = std::to_string(fuzz::kNowMs / 1000);
  const auto parsed = channels::verify_standard_signature(channel().keys(), "msg_fuzz", timestamp,
                                                          input, body, fuzz::kNowMs);
  fuzz::require(!parsed.ok(), "a fuzzed webhook-signature verified without the secret");
  if (const auto key = channels::standard_secret_key(input)) {
    fuzz::require(!key->empty() && key->size() <= channels::kStandardKeyBytesMax,
                  "a decoded secret is empty or over its bound");
  }
  // Signed by the harness (webhook-id from the first header line's value, if any).
  const std::string id =
      headers.empty() || headers.begin()->second.empty() ? "msg_fuzz" : headers.begin()->second;
  const codec::Headers signed_headers{
      {std::string(channels::kStandardIdHeader), id},
      {std::string(channels::kStandardTimestampHeader), timestamp},
      {std::string(channels::kStandardSignatureHeader),
       channels::standard_signature(channel().keys(), id, fuzz::kNowMs / 1000, body)}};
  const auto signed_result =
      channel().verify(channels::InboundRequest{body, &signed_headers, fuzz::kNowMs});
  fuzz::check_self_signed(signed_result);
  return 0;
}

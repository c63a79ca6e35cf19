// libFuzzer target: the stripe channel on arbitrary headers and bodies, the Stripe-Signature parser
// on arbitrary header text, and the event mapping behind a signature the harness makes itself.
// Input: optional "Name: value" header lines, a blank line, then the body.
#include <string>

#include "channels/stripe/stripe_channel.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace seatflow;

const channels::StripeChannel& channel() {
  static const channels::StripeChannel instance(
      channels::StripeConfig{{"whsec_fuzz_secret", "whsec_fuzz_rotated"}, "cny", 300'000});
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = fuzz::as_text(data, size);
  codec::Headers headers;
  const auto body = fuzz::verify_unsigned(channel(), input, headers);
  // The whole input as a Stripe-Signature header: bounded, never a pass.
  const auto parsed =
      channels::verify_stripe_signature(channel().keys(), input, body, fuzz::kNowMs);
  fuzz::require(!parsed.ok(), "a fuzzed Stripe-Signature verified without the secret");
  // Signed by the harness: the signature passes, so what is left is the event mapping.
  const codec::Headers signed_headers{
      {std::string(channels::kStripeSignatureHeader),
       channels::stripe_signature_header(channel().keys(), fuzz::kNowMs / 1000, body)}};
  const auto signed_result =
      channel().verify(channels::InboundRequest{body, &signed_headers, fuzz::kNowMs});
  fuzz::check_self_signed(signed_result);
  fuzz::check_result(channels::stripe_callback_from_event(input, "cny"));
  return 0;
}

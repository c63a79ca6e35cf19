// libFuzzer target: the alipay form parser, signed-content builder, amount parser and the checks
// that follow a valid signature, plus full verify() with a throwaway key.
#include <string>

#include "channels/alipay/alipay_channel.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace seatflow;

const channels::AlipayRules kRules{"2021000000000001", ""};

const channels::AlipayChannel& channel() {
  static const channels::AlipayChannel instance(kRules, fuzz::throwaway_key());
  return instance;
}

// Whatever parses as an amount prints back to the same number of cents.
void check_amount(std::string_view text) {
  const auto cents = channels::parse_yuan_to_cents(text);
  if (!cents) {
    return;
  }
  fuzz::require(*cents >= 0, "negative amount parsed");
  const std::string printed = std::to_string(*cents / 100) + "." +
                              std::to_string(*cents % 100 / 10) + std::to_string(*cents % 10);
  fuzz::require(channels::parse_yuan_to_cents(printed) == cents, "amount does not round-trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = fuzz::as_text(data, size);
  check_amount(input);
  const auto result = channel().verify(channels::InboundRequest{input, nullptr, fuzz::kNowMs});
  fuzz::check_result(result);
  // Nobody can forge RSA here: a verified callback means the signature check is broken.
  fuzz::require(!result.ok(), "a fuzzed form verified under a throwaway key");
  const auto parsed = channels::parse_alipay_form(input);
  if (const auto* form = (parsed.ok() ? &parsed.value() : nullptr)) {
    fuzz::require(form->signed_params.size() <= channels::kAlipayMaxParams, "too many params");
    const auto content = channels::alipay_sign_content(*form);
    fuzz::require(content.size() <= input.size() + form->signed_params.size(),
                  "signed content larger than the body");
    // The checks a validly signed form would reach.
    fuzz::check_result(channels::alipay_callback_from_form(*form, kRules));
  }
  return 0;
}

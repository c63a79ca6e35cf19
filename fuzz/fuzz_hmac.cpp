// libFuzzer target: the hmac channel on arbitrary bodies, and on bodies it signs itself (so the
// checks behind the signature are reached too).
#include <string>

#include "channels/hmac_channel.hpp"
#include "channels/text.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace seatflow;

const channels::HmacChannel& channel() {
  static const channels::HmacChannel instance(channels::HmacConfig{{"fuzz-secret"}, 300'000});
  return instance;
}

// Input "id\npayment\nstatus\ntimestamp": the fields of a body the harness signs correctly.
void verify_self_signed(std::string_view input) {
  std::string_view parts[4];
  std::size_t start = 0;
  for (int i = 0; i < 4; ++i) {
    const auto end = i == 3 ? input.size() : input.find('\n', start);
    if (end == std::string_view::npos) {
      return;
    }
    parts[i] = input.substr(start, end - start);
    start = end + 1;
  }
  if (!channels::is_valid_utf8(parts[0]) || !channels::is_valid_utf8(parts[1]) ||
      parts[2].size() != 1 || parts[3].size() > 15) {
    return;
  }
  std::int64_t timestamp = 0;
  for (const char c : parts[3]) {
    timestamp = timestamp * 10 + (static_cast<unsigned char>(c) % 10);
  }
  const int status = parts[2][0] % 4;
  const auto body = channel().signed_body(parts[0], parts[1], status,
                                          fuzz::kNowMs - 400'000 + timestamp % 800'000);
  const channels::Headers headers;
  const auto result = channel().verify(channels::InboundRequest{body, &headers, fuzz::kNowMs});
  fuzz::check_result(result);
  const auto* rejection = std::get_if<channels::Rejection>(&result);
  fuzz::require(rejection == nullptr || rejection->reason != channels::RejectReason::bad_signature,
                "a body signed with the channel's own secret failed its signature check");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = fuzz::as_text(data, size);
  const channels::Headers headers;
  fuzz::check_result(channel().verify(channels::InboundRequest{input, &headers, fuzz::kNowMs}));
  verify_self_signed(input);
  return 0;
}

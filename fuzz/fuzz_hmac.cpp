// libFuzzer target: the hmac channel on arbitrary bodies, and on bodies it signs itself (so the
// checks behind the signature are reached too).
#include <array>
#include <string>

#include "channels/hmac/hmac_channel.hpp"
#include "codec/json_members.hpp"
#include "codec/text.hpp"
#include "fuzz_support.hpp"
#include "tests/support/json_members_reference.hpp"

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
  if (!codec::is_valid_utf8(parts[0]) || !codec::is_valid_utf8(parts[1]) || parts[2].size() != 1 ||
      parts[3].size() > 15) {
    return;
  }
  std::int64_t timestamp = 0;
  for (const char c : parts[3]) {
    timestamp = timestamp * 10 + (static_cast<unsigned char>(c) % 10);
  }
  const int status = parts[2][0] % 4;
  const auto body = channel().signed_body(parts[0], parts[1], status,
                                          fuzz::kNowMs - 400'000 + timestamp % 800'000);
  const codec::Headers headers;
  const auto result = channel().verify(channels::InboundRequest{body, &headers, fuzz::kNowMs});
  fuzz::check_result(result);
  const auto* rejection = result.ok() ? nullptr : &result.failure();
  fuzz::require(rejection == nullptr ||
                    channels::errc_of(rejection->code) != channels::RejectReason::bad_signature,
                "a body signed with the channel's own secret failed its signature check");
}

// The dialect's JSON reader against nlohmann::json's parser: the same verdict and the same members.
void compare_json_readers(std::string_view input) {
  static constexpr std::array<std::string_view, 3> kNames{"callbackId", "paymentNo", "status"};
  std::array<codec::JsonMember, kNames.size()> ours;
  std::array<codec::JsonMember, kNames.size()> reference;
  const bool ours_ok = codec::read_json_members(input, kNames, ours);
  if (input.find('\0') != std::string_view::npos) {
    // nlohmann::json stops reading at a raw NUL outside a string; the dialect refuses one anywhere.
    fuzz::require(!ours_ok, "read_json_members accepted a raw NUL byte");
    return;
  }
  const bool reference_ok = testing::JsonMembersReference::read(input, kNames, reference);
  fuzz::require(ours_ok == reference_ok, "read_json_members and nlohmann::json disagree on a body");
  if (!ours_ok) {
    return;
  }
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    using Kind = codec::JsonMember::Kind;
    fuzz::require(ours[i].kind == reference[i].kind &&
                      (ours[i].kind != Kind::string || ours[i].text == reference[i].text) &&
                      (ours[i].kind != Kind::int64 || ours[i].value == reference[i].value),
                  "read_json_members and nlohmann::json read a member differently");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = fuzz::as_text(data, size);
  const codec::Headers headers;
  fuzz::check_result(channel().verify(channels::InboundRequest{input, &headers, fuzz::kNowMs}));
  verify_self_signed(input);
  compare_json_readers(input);
  return 0;
}

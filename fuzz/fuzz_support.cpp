// Shared pieces of the libFuzzer targets (see fuzz_support.hpp).
#include "fuzz_support.hpp"

#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "codec/digest.hpp"
#include "codec/text.hpp"
#include "http/status.hpp"

namespace seatflow::fuzz {

const codec::SharedKey& throwaway_key() {
  static const codec::SharedKey key(EVP_RSA_gen(2048), [](EVP_PKEY* k) { EVP_PKEY_free(k); });
  require(key != nullptr, "RSA key generation failed");
  return key;
}

std::string_view split_headers(std::string_view input, codec::Headers& headers) {
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
      std::string name(line.substr(0, colon));
      for (auto& c : name) {
        if (c >= 'A' && c <= 'Z') {
          c = static_cast<char>(c + 32);
        }
      }
      headers[std::move(name)] = std::string(line.substr(colon + 2));
    }
    start = end + 1;
  }
  return input.substr(blank + 2);
}

std::string_view verify_unsigned(const channels::Channel& channel, std::string_view input,
                                 codec::Headers& headers) {
  const auto body = split_headers(input, headers);
  const auto result = channel.verify(channels::InboundRequest{body, &headers, kNowMs});
  check_result(result);
  require(!result.ok(), "a fuzzed request verified without the channel's key");
  return body;
}

void check_self_signed(const channels::Result<domain::VerifiedCallback>& result) {
  check_result(result);
  if (const auto* rejection = (result.ok() ? nullptr : &result.failure())) {
    require(channels::errc_of(rejection->code) != channels::RejectReason::bad_signature &&
                channels::errc_of(rejection->code) != channels::RejectReason::stale,
            "a request signed with the channel's own key failed its signature check");
  }
}

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
  }
}

void check_verified(const domain::VerifiedCallback& callback) {
  require(codec::is_valid_id(callback.callback_id), "callback id is not a valid id");
  require(codec::is_valid_id(callback.payment_no), "payment number is not a valid id");
  require(callback.channel_trade_no.empty() || codec::is_valid_id(callback.channel_trade_no),
          "channel trade number is not a valid id");
  require(!callback.amount_cents || *callback.amount_cents >= 0, "negative amount");
  require(callback.payload_sha256 == codec::business_digest(callback), "digest mismatch");
}

void check_result(const channels::Result<domain::VerifiedCallback>& result) {
  if (const auto* rejection = (result.ok() ? nullptr : &result.failure())) {
    require(!rejection->detail.empty() && rejection->detail.size() < 200,
            "rejection detail empty or long (does it echo input?)");
    const int status = http::http_status(channels::errc_of(rejection->code));
    require(status == 400 || status == 401 ||
                (status == 200 &&
                 channels::errc_of(rejection->code) == channels::RejectReason::unhandled_event),
            "rejection maps to neither 400 nor 401");
    return;
  }
  check_verified(result.value());
}

}  // namespace seatflow::fuzz

// Shared pieces of the libFuzzer targets (see fuzz_support.hpp).
#include "fuzz_support.hpp"

#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <cstdio>
#include <cstdlib>

#include "channels/digest.hpp"
#include "channels/text.hpp"

namespace seatflow::fuzz {

const channels::SharedKey& throwaway_key() {
  static const channels::SharedKey key(EVP_RSA_gen(2048), [](EVP_PKEY* k) { EVP_PKEY_free(k); });
  require(key != nullptr, "RSA key generation failed");
  return key;
}

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
  }
}

void check_verified(const domain::VerifiedCallback& callback) {
  require(channels::is_valid_id(callback.callback_id), "callback id is not a valid id");
  require(channels::is_valid_id(callback.payment_no), "payment number is not a valid id");
  require(callback.channel_trade_no.empty() || channels::is_valid_id(callback.channel_trade_no),
          "channel trade number is not a valid id");
  require(!callback.amount_cents || *callback.amount_cents >= 0, "negative amount");
  require(callback.payload_sha256 == channels::business_digest(callback), "digest mismatch");
}

void check_result(const channels::VerifyResult& result) {
  if (const auto* rejection = std::get_if<channels::Rejection>(&result)) {
    require(!rejection->detail.empty() && rejection->detail.size() < 200,
            "rejection detail empty or long (does it echo input?)");
    const int status = channels::http_status(rejection->reason);
    require(status == 400 || status == 401 ||
                (status == 200 && rejection->reason == channels::RejectReason::unhandled_event),
            "rejection maps to neither 400 nor 401");
    return;
  }
  check_verified(std::get<domain::VerifiedCallback>(result));
}

}  // namespace seatflow::fuzz

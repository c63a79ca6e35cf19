// The resumable SHA-256: OpenSSL's SHA256_CTX copied in and out of a string. OpenSSL 3 deprecates
// the low-level SHA-256 calls in favour of EVP, whose contexts cannot leave the process's heap;
// the context struct is plain data, so a copy of its bytes is a faithful copy of the hash.
#include "codec/sha256_state.hpp"

#include <openssl/sha.h>

#include <array>
#include <cstring>
#include <stdexcept>

#include "codec/digest.hpp"

namespace seatflow::codec {
namespace {

SHA256_CTX ctx_of(std::string_view state) {
  if (state.size() != sizeof(SHA256_CTX)) {
    throw std::invalid_argument("sha256 state: not a state sha256_begin made");
  }
  SHA256_CTX context;
  std::memcpy(&context, state.data(), sizeof(context));
  return context;
}

std::string ctx_bytes(const SHA256_CTX& context) {
  std::string state(sizeof(context), '\0');
  std::memcpy(state.data(), &context, sizeof(context));
  return state;
}

}  // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

std::string sha256_begin() {
  SHA256_CTX context;
  if (SHA256_Init(&context) != 1) {
    throw std::runtime_error("SHA256_Init failed");
  }
  return ctx_bytes(context);
}

void sha256_update(std::string& state, std::string_view data) {
  SHA256_CTX context = ctx_of(state);
  if (SHA256_Update(&context, data.data(), data.size()) != 1) {
    throw std::runtime_error("SHA256_Update failed");
  }
  state = ctx_bytes(context);
}

std::string sha256_finish(const std::string& state) {
  SHA256_CTX context = ctx_of(state);
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  if (SHA256_Final(digest.data(), &context) != 1) {
    throw std::runtime_error("SHA256_Final failed");
  }
  return to_lower_hex(
      std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

#pragma GCC diagnostic pop

}  // namespace seatflow::codec

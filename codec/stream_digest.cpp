// Incremental SHA-1 / SHA-256 through OpenSSL's EVP_MD_CTX (see the header).
#include "codec/stream_digest.hpp"

#include <openssl/evp.h>

#include <array>
#include <cassert>
#include <stdexcept>

#include "codec/crypto.hpp"
#include "codec/digest.hpp"

namespace seatflow::codec {

struct StreamDigest::Impl {
  struct CtxFree {
    void operator()(EVP_MD_CTX* ctx) const noexcept { EVP_MD_CTX_free(ctx); }
  };
  std::unique_ptr<EVP_MD_CTX, CtxFree> ctx{EVP_MD_CTX_new()};
  bool finished = false;
};

StreamDigest::StreamDigest(Algorithm algorithm) : impl_(std::make_unique<Impl>()) {
  const EVP_MD* md = algorithm == Algorithm::sha256 ? sha256_md() : EVP_sha1();
  if (!impl_->ctx || md == nullptr || EVP_DigestInit_ex(impl_->ctx.get(), md, nullptr) != 1) {
    throw std::runtime_error("OpenSSL: cannot start a digest");
  }
}

StreamDigest::~StreamDigest() = default;

void StreamDigest::update(std::string_view bytes) {
  assert(!impl_->finished && "a finished digest takes no more bytes");
  if (!bytes.empty() && EVP_DigestUpdate(impl_->ctx.get(), bytes.data(), bytes.size()) != 1) {
    throw std::runtime_error("OpenSSL: digest update failed");
  }
}

std::string StreamDigest::hex() {
  assert(!impl_->finished && "a digest is read once");
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int md_len = 0;
  if (EVP_DigestFinal_ex(impl_->ctx.get(), md.data(), &md_len) != 1) {
    throw std::runtime_error("OpenSSL: digest final failed");
  }
  impl_->finished = true;
  return to_lower_hex(std::string_view(reinterpret_cast<const char*>(md.data()), md_len));
}

}  // namespace seatflow::codec

// OpenSSL 3 EVP implementations of PEM key loading, RSA-SHA256, HMAC-SHA256, strict base64 and
// AES-256-GCM.
#include "codec/crypto.hpp"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>

namespace seatflow::codec {

namespace {

struct MdFree {
  void operator()(EVP_MD* md) const noexcept { EVP_MD_free(md); }
};
struct MacFree {
  void operator()(EVP_MAC* mac) const noexcept { EVP_MAC_free(mac); }
};
struct CipherFree {
  void operator()(EVP_CIPHER* cipher) const noexcept { EVP_CIPHER_free(cipher); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const noexcept { EVP_MD_CTX_free(ctx); }
};
struct CipherCtxFree {
  void operator()(EVP_CIPHER_CTX* ctx) const noexcept { EVP_CIPHER_CTX_free(ctx); }
};
struct BioFree {
  void operator()(BIO* bio) const noexcept { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const noexcept { X509_free(cert); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;
using CipherCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;

// Algorithms are fetched once: a fetch is a locked provider-store search, and the fetched objects
// are immutable and safe to share between threads (sha256_md() below, outside this namespace).
EVP_MAC* hmac_mac() {
  static const std::unique_ptr<EVP_MAC, MacFree> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!mac) {
    throw std::runtime_error("OpenSSL provides no HMAC");
  }
  return mac.get();
}

const EVP_CIPHER* aes256gcm() {
  static const std::unique_ptr<EVP_CIPHER, CipherFree> cipher(
      EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr));
  if (!cipher) {
    throw std::runtime_error("OpenSSL provides no AES-256-GCM");
  }
  return cipher.get();
}

SharedKey share(EVP_PKEY* key) {
  return SharedKey(key, [](EVP_PKEY* k) { EVP_PKEY_free(k); });
}

Failure fail(std::string reason, errc code = errc::bad_key) {
  // Leave no stale entries in this thread's OpenSSL error queue for an unrelated later call.
  ERR_clear_error();
  return refused(code, std::move(reason));
}

// A PEM text is at most kMaxKeyFileBytes, so its size always fits the int that BIO wants.
BioPtr memory_bio(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) {
    throw std::bad_alloc();
  }
  return bio;
}

Result<SharedKey> require_rsa(SharedKey key) {
  if (EVP_PKEY_is_a(key.get(), "RSA") != 1) {
    return fail("is not an RSA key");
  }
  if (EVP_PKEY_get_bits(key.get()) < kMinRsaBits) {
    return fail("is an RSA key under " + std::to_string(kMinRsaBits) + " bits");
  }
  return key;
}

// The PEM text of a file, or why not (the path is configuration, not a secret).
Result<std::string> read_key_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail("cannot read " + path + ": " + std::strerror(errno), errc::unreadable);
  }
  std::string text;
  std::array<char, 4096> chunk{};
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxKeyFileBytes) {
      return fail(path + " is larger than a key file can be", errc::unreadable);
    }
  }
  if (in.bad()) {
    return fail("cannot read " + path, errc::unreadable);
  }
  return text;
}

// OpenSSL asks this for the passphrase of an encrypted key: refuse instead of prompting on a tty.
int no_passphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*userdata*/) {
  return -1;
}

}  // namespace

const EVP_MD* sha256_md() {
  static const std::unique_ptr<EVP_MD, MdFree> md(EVP_MD_fetch(nullptr, "SHA256", nullptr));
  if (!md) {
    throw std::runtime_error("OpenSSL provides no SHA256");
  }
  return md.get();
}

Result<SharedKey> public_key_from_pem(std::string_view pem) {
  if (pem.size() > kMaxKeyFileBytes) {
    return fail("is larger than a key can be");
  }
  auto bio = memory_bio(pem);
  if (EVP_PKEY* key = PEM_read_bio_PUBKEY(bio.get(), nullptr, no_passphrase, nullptr)) {
    return require_rsa(share(key));
  }
  ERR_clear_error();
  bio = memory_bio(pem);
  const std::unique_ptr<X509, X509Free> cert(
      PEM_read_bio_X509(bio.get(), nullptr, no_passphrase, nullptr));
  if (!cert) {
    return fail("holds no PEM public key (BEGIN PUBLIC KEY) or certificate");
  }
  EVP_PKEY* key = X509_get_pubkey(cert.get());
  if (key == nullptr) {
    return fail("holds a certificate whose public key OpenSSL cannot read");
  }
  return require_rsa(share(key));
}

Result<SharedKey> load_public_key_file(const std::string& path) {
  auto pem = read_key_file(path);
  if (!pem.ok()) {
    return std::move(pem).failure();
  }
  auto key = public_key_from_pem(pem.value());
  if (!key.ok()) {
    return fail(path + " " + key.detail());
  }
  return key;
}

Result<SharedKey> private_key_from_pem(std::string_view pem) {
  if (pem.size() > kMaxKeyFileBytes) {
    return fail("is larger than a key can be");
  }
  auto bio = memory_bio(pem);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr);
  if (key == nullptr) {
    return fail("holds no unencrypted PEM private key");
  }
  return require_rsa(share(key));
}

Result<SharedKey> load_private_key_file(const std::string& path) {
  auto pem = read_key_file(path);
  if (!pem.ok()) {
    return std::move(pem).failure();
  }
  auto key = private_key_from_pem(pem.value());
  if (!key.ok()) {
    return fail(path + " " + key.detail());
  }
  return key;
}

bool rsa_sha256_verify(EVP_PKEY* key, std::span<const std::string_view> pieces,
                       std::string_view signature) {
  const MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx) {
    throw std::bad_alloc();
  }
  bool ok = EVP_DigestVerifyInit(ctx.get(), nullptr, sha256_md(), nullptr, key) == 1;
  for (const auto piece : pieces) {
    ok = ok && EVP_DigestVerifyUpdate(ctx.get(), piece.data(), piece.size()) == 1;
  }
  ok = ok && EVP_DigestVerifyFinal(ctx.get(), bytes_of(signature), signature.size()) == 1;
  if (!ok) {
    ERR_clear_error();
  }
  return ok;
}

std::string rsa_sha256_sign(EVP_PKEY* key, std::string_view data) {
  const MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx) {
    throw std::bad_alloc();
  }
  std::size_t size = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, sha256_md(), nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &size, bytes_of(data), data.size()) != 1) {
    ERR_clear_error();
    throw std::runtime_error("RSA-SHA256 signing failed (is it a private RSA key?)");
  }
  std::string signature(size, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     bytes_of(data), data.size()) != 1) {
    ERR_clear_error();
    throw std::runtime_error("RSA-SHA256 signing failed");
  }
  signature.resize(size);
  return signature;
}

void MacCtxFree::operator()(EVP_MAC_CTX* ctx) const noexcept {
  EVP_MAC_CTX_free(ctx);
}

MacCtxPtr keyed_hmac_sha256(std::string_view key) {
  if (key.empty()) {
    throw std::invalid_argument("HMAC-SHA256: empty key");
  }
  MacCtxPtr ctx(EVP_MAC_CTX_new(hmac_mac()));
  if (!ctx) {
    throw std::bad_alloc();
  }
  char digest_name[] = "SHA256";
  const std::array<OSSL_PARAM, 2> params = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
      OSSL_PARAM_construct_end()};
  if (EVP_MAC_init(ctx.get(), bytes_of(key), key.size(), params.data()) != 1) {
    ERR_clear_error();
    throw std::runtime_error("cannot key HMAC-SHA256");
  }
  return ctx;
}

std::string hmac_sha256(std::string_view key, std::span<const std::string_view> pieces) {
  const auto ctx = keyed_hmac_sha256(key);
  bool ok = true;
  for (const auto piece : pieces) {
    ok = ok && EVP_MAC_update(ctx.get(), bytes_of(piece), piece.size()) == 1;
  }
  std::string mac(kHmacSha256Bytes, '\0');
  std::size_t mac_len = 0;
  ok = ok && EVP_MAC_final(ctx.get(), reinterpret_cast<unsigned char*>(mac.data()), &mac_len,
                           mac.size()) == 1;
  if (!ok || mac_len != kHmacSha256Bytes) {
    ERR_clear_error();
    throw std::runtime_error("HMAC-SHA256 computation failed");
  }
  return mac;
}

bool keep_openssl_until_exit() {
  return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<std::string> base64_decode(std::string_view text, std::size_t max_decoded_bytes) {
  if (text.size() % 4 != 0 || text.size() / 4 * 3 > max_decoded_bytes + 2 ||
      text.size() > static_cast<std::size_t>(INT_MAX)) {
    return std::nullopt;
  }
  std::size_t padding = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                          (c >= '0' && c <= '9') || c == '+' || c == '/';
    if (c == '=' && i + 2 >= text.size()) {
      ++padding;
    } else if (!alphabet || padding > 0) {
      // Not in the alphabet, or data after a padding character.
      return std::nullopt;
    }
  }
  const std::size_t decoded = text.size() / 4 * 3 - padding;
  if (decoded > max_decoded_bytes) {
    return std::nullopt;
  }
  std::string out(text.size() / 4 * 3, '\0');
  if (!text.empty() && EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes_of(text),
                                       static_cast<int>(text.size())) < 0) {
    return std::nullopt;
  }
  // EVP_DecodeBlock counts padding as zero bytes; the real length drops them.
  out.resize(decoded);
  return out;
}

std::string base64_encode(std::string_view bytes) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX / 4 * 3 - 3)) {
    throw std::length_error("base64_encode: input too large");
  }
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes_of(bytes),
                                      static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(written));
  return out;
}

std::optional<std::string> base64_decode_unpadded_ok(std::string_view text,
                                                     std::size_t max_decoded_bytes) {
  if (text.size() % 4 == 1 || text.size() > max_decoded_bytes / 3 * 4 + 8) {
    return std::nullopt;
  }
  std::string padded(text);
  padded.append((4 - text.size() % 4) % 4, '=');
  return base64_decode(padded, max_decoded_bytes);
}

namespace {

bool aes_sizes_ok(std::string_view key, std::string_view nonce) {
  return key.size() == kAesGcmKeyBytes && !nonce.empty() && nonce.size() <= kAesGcmMaxNonceBytes;
}

// A context set up for AES-256-GCM with this key and nonce (encrypt or decrypt).
CipherCtxPtr gcm_context(std::string_view key, std::string_view nonce, bool encrypt) {
  CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx) {
    throw std::bad_alloc();
  }
  const int enc = encrypt ? 1 : 0;
  const bool ok =
      EVP_CipherInit_ex2(ctx.get(), aes256gcm(), nullptr, nullptr, enc, nullptr) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce.size()),
                          nullptr) == 1 &&
      EVP_CipherInit_ex2(ctx.get(), nullptr, bytes_of(key), bytes_of(nonce), enc, nullptr) == 1;
  if (!ok) {
    ERR_clear_error();
    throw std::runtime_error("AES-256-GCM set-up failed");
  }
  return ctx;
}

}  // namespace

std::optional<std::string> aes256gcm_open(std::string_view key, std::string_view nonce,
                                          std::string_view associated_data,
                                          std::string_view sealed) {
  if (!aes_sizes_ok(key, nonce) || sealed.size() < kAesGcmTagBytes ||
      sealed.size() > static_cast<std::size_t>(INT_MAX) ||
      associated_data.size() > static_cast<std::size_t>(INT_MAX)) {
    return std::nullopt;
  }
  const auto ciphertext = sealed.substr(0, sealed.size() - kAesGcmTagBytes);
  std::array<unsigned char, kAesGcmTagBytes> tag{};
  std::memcpy(tag.data(), sealed.data() + ciphertext.size(), tag.size());
  const auto ctx = gcm_context(key, nonce, false);
  std::string plain(ciphertext.size(), '\0');
  auto* out = reinterpret_cast<unsigned char*>(plain.data());
  int len = 0;
  int final_len = 0;
  const bool ok = EVP_DecryptUpdate(ctx.get(), nullptr, &len, bytes_of(associated_data),
                                    static_cast<int>(associated_data.size())) == 1 &&
                  EVP_DecryptUpdate(ctx.get(), out, &len, bytes_of(ciphertext),
                                    static_cast<int>(ciphertext.size())) == 1 &&
                  EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag.size()),
                                      tag.data()) == 1 &&
                  EVP_DecryptFinal_ex(ctx.get(), out + len, &final_len) == 1;
  if (!ok) {
    ERR_clear_error();
    return std::nullopt;
  }
  plain.resize(static_cast<std::size_t>(len + final_len));
  return plain;
}

std::string aes256gcm_seal(std::string_view key, std::string_view nonce,
                           std::string_view associated_data, std::string_view plaintext) {
  if (!aes_sizes_ok(key, nonce)) {
    throw std::invalid_argument("AES-256-GCM needs a 32-byte key and a 1..64-byte nonce");
  }
  if (plaintext.size() > static_cast<std::size_t>(INT_MAX) - kAesGcmTagBytes ||
      associated_data.size() > static_cast<std::size_t>(INT_MAX)) {
    throw std::length_error("AES-256-GCM input too large");
  }
  const auto ctx = gcm_context(key, nonce, true);
  std::string sealed(plaintext.size() + kAesGcmTagBytes, '\0');
  auto* out = reinterpret_cast<unsigned char*>(sealed.data());
  int len = 0;
  int final_len = 0;
  const bool ok =
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, bytes_of(associated_data),
                        static_cast<int>(associated_data.size())) == 1 &&
      EVP_EncryptUpdate(ctx.get(), out, &len, bytes_of(plaintext),
                        static_cast<int>(plaintext.size())) == 1 &&
      EVP_EncryptFinal_ex(ctx.get(), out + len, &final_len) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kAesGcmTagBytes),
                          out + len + final_len) == 1;
  if (!ok) {
    ERR_clear_error();
    throw std::runtime_error("AES-256-GCM encryption failed");
  }
  sealed.resize(static_cast<std::size_t>(len + final_len) + kAesGcmTagBytes);
  return sealed;
}

std::string random_alnum(std::size_t count) {
  constexpr std::string_view kAlphabet =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string out;
  out.reserve(count);
  std::array<unsigned char, 64> pool{};
  while (out.size() < count) {
    if (RAND_bytes(pool.data(), static_cast<int>(pool.size())) != 1) {
      throw std::runtime_error("OpenSSL's random generator failed");
    }
    for (const unsigned char byte : pool) {
      // Rejection sampling keeps every character equally likely (248 = 4 * 62).
      if (byte < 248 && out.size() < count) {
        out.push_back(kAlphabet[byte % kAlphabet.size()]);
      }
    }
  }
  return out;
}

}  // namespace seatflow::codec

// OpenSSL 3 building blocks of the dialects: PEM keys, RSA-SHA256, HMAC-SHA256, strict base64,
// AES-256-GCM, constant-time comparison.
#pragma once

#include <openssl/types.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "codec/errc.hpp"

namespace seatflow::codec {

// An OpenSSL key shared by the threads that verify with it. In OpenSSL 3 an EVP_PKEY may be used
// read-only from several threads at once as long as every operation has its own EVP_MD_CTX.
using SharedKey = std::shared_ptr<EVP_PKEY>;

// SHA-256, fetched once: EVP_sha256() would repeat the provider lookup (a locked store search) on
// every call, which costs more than hashing a callback's few hundred bytes. The EVP_MD is
// immutable after the fetch and safe to share between threads. Throws when OpenSSL has none.
[[nodiscard]] const EVP_MD* sha256_md();

// Keeps OpenSSL's global state alive until the process is gone (OPENSSL_INIT_NO_ATEXIT): call it
// first in main, before any other OpenSSL call. CAF runs detached actors on detached threads, and a
// thread's OpenSSL state is freed by a thread-exit destructor that runs after the actor system has
// stopped waiting for it; with OpenSSL's default at-exit cleanup, main's exit could free the lock
// that destructor is holding (a ThreadSanitizer report at the engine's stop, and a use after free
// in a plain build). The state is reclaimed with the process. Returns false when OpenSSL fails.
bool keep_openssl_until_exit();

// OpenSSL's view of the bytes of `text`.
[[nodiscard]] inline const unsigned char* bytes_of(std::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}

// Keys below this size are refused: RSA2 (Alipay) and WeChat Pay v3 both use 2048-bit keys.
inline constexpr int kMinRsaBits = 2048;
// Key files larger than this are not keys; refusing them bounds what start-up reads.
inline constexpr std::size_t kMaxKeyFileBytes = 64 * 1024;

// An RSA public key from a PEM file: "BEGIN PUBLIC KEY" (SubjectPublicKeyInfo) or, for WeChat
// platform certificates, "BEGIN CERTIFICATE" (its subject key). errc::unreadable or errc::bad_key,
// with a one-line reason, when the file is unreadable, not such a PEM, not RSA or under
// kMinRsaBits.
[[nodiscard]] Result<SharedKey> load_public_key_file(const std::string& path);
[[nodiscard]] Result<SharedKey> public_key_from_pem(std::string_view pem);
// An unencrypted RSA private key from a PEM file (PKCS#8 or traditional); signing tools and tests.
[[nodiscard]] Result<SharedKey> load_private_key_file(const std::string& path);
[[nodiscard]] Result<SharedKey> private_key_from_pem(std::string_view pem);

// True when `signature` is an RSASSA-PKCS1-v1_5 SHA-256 signature by `key` over the concatenation
// of `pieces` (fed in order, never copied together). Any OpenSSL failure counts as "does not
// verify". Thread-safe: a fresh EVP_MD_CTX per call.
[[nodiscard]] bool rsa_sha256_verify(EVP_PKEY* key, std::span<const std::string_view> pieces,
                                     std::string_view signature);
// The raw RSASSA-PKCS1-v1_5 SHA-256 signature of `data`; throws std::runtime_error when OpenSSL
// cannot sign (not a private key, resource exhaustion).
[[nodiscard]] std::string rsa_sha256_sign(EVP_PKEY* key, std::string_view data);

inline constexpr std::size_t kHmacSha256Bytes = 32;

struct MacCtxFree {
  void operator()(EVP_MAC_CTX* ctx) const noexcept;
};
using MacCtxPtr = std::unique_ptr<EVP_MAC_CTX, MacCtxFree>;

// A fresh context keyed for HMAC-SHA256 with `key`. Not thread-safe: one thread at a time computes
// on it, and EVP_MAC_init(ctx, nullptr, 0, nullptr) re-arms it with the key it holds. Throws
// std::invalid_argument for an empty key and std::runtime_error when OpenSSL fails.
[[nodiscard]] MacCtxPtr keyed_hmac_sha256(std::string_view key);

// The raw 32-byte HMAC-SHA256 under `key` of the concatenation of `pieces` (fed in order, never
// copied together). Thread-safe: a fresh EVP_MAC_CTX per call. Throws std::invalid_argument for
// an empty key and std::runtime_error when OpenSSL fails (resource exhaustion).
[[nodiscard]] std::string hmac_sha256(std::string_view key,
                                      std::span<const std::string_view> pieces);

// Equality whose time depends only on the lengths (CRYPTO_memcmp), for signatures and MACs.
[[nodiscard]] bool constant_time_equal(std::string_view a, std::string_view b);

// Standard base64 with padding (RFC 4648 §4), strictly: length a multiple of 4, alphabet only,
// '=' only as the last one or two characters, no whitespace. nullopt otherwise or when the
// decoded size would exceed `max_decoded_bytes`.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text,
                                                       std::size_t max_decoded_bytes);
[[nodiscard]] std::string base64_encode(std::string_view bytes);
// The same alphabet, where the '=' padding may also be left out (RFC 4648 §3.2): the text is
// padded to a multiple of 4 and decoded strictly as above. nullopt for a length of 1 mod 4.
[[nodiscard]] std::optional<std::string> base64_decode_unpadded_ok(std::string_view text,
                                                                   std::size_t max_decoded_bytes);

inline constexpr std::size_t kAesGcmKeyBytes = 32;
inline constexpr std::size_t kAesGcmTagBytes = 16;
inline constexpr std::size_t kAesGcmMaxNonceBytes = 64;

// AES-256-GCM: `sealed` is ciphertext followed by the 16-byte tag (WeChat Pay's layout). nullopt
// when the key is not 32 bytes, the nonce is empty or over kAesGcmMaxNonceBytes, `sealed` is
// shorter than the tag, or the tag does not authenticate.
[[nodiscard]] std::optional<std::string> aes256gcm_open(std::string_view key,
                                                        std::string_view nonce,
                                                        std::string_view associated_data,
                                                        std::string_view sealed);
// The inverse: ciphertext followed by the tag. Throws std::invalid_argument on a bad key or nonce
// size and std::runtime_error when OpenSSL fails.
[[nodiscard]] std::string aes256gcm_seal(std::string_view key, std::string_view nonce,
                                         std::string_view associated_data,
                                         std::string_view plaintext);

// `count` random characters from [0-9A-Za-z] (OpenSSL's CSPRNG); nonces for signing tools.
[[nodiscard]] std::string random_alnum(std::size_t count);

}  // namespace seatflow::codec

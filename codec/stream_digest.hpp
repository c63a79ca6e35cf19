// Incremental SHA-1 and SHA-256 over a byte stream (a bill as it inflates): fed in chunks, read
// once as lowercase hex. SHA-1 only because WeChat Pay names its bills' hash so (hash_type SHA1);
// SeatFlow's own record of a bill is its SHA-256.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace seatflow::codec {

class StreamDigest {
 public:
  enum class Algorithm { sha1, sha256 };

  // Throws std::runtime_error when OpenSSL cannot set the digest up (resource exhaustion).
  explicit StreamDigest(Algorithm algorithm);
  ~StreamDigest();
  StreamDigest(const StreamDigest&) = delete;
  StreamDigest& operator=(const StreamDigest&) = delete;

  void update(std::string_view bytes);
  // The digest of everything fed, lowercase hex; the digest is finished (update no more).
  [[nodiscard]] std::string hex();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seatflow::codec

// RSA key pairs for tests, generated with OpenSSL at test time (never committed) and kept as PEM
// files in the build tree, so the many test processes of one build share them.
#pragma once

#include <string>

#include "codec/crypto.hpp"

namespace seatflow::testing {

struct TestKeyPair {
  codec::SharedKey private_key;
  codec::SharedKey public_key;  // nullptr for keys the channels refuse (under 2048 bits)
  std::string public_pem;
  std::string public_pem_path;
  std::string private_pem_path;
};

// The RSA key pair called `name` of `bits` (2048 unless given). Generated on first use in this
// build — next to the test binary, in "test-keys/" (inside the gitignored build folder) — and
// read back by every later test process; concurrent first uses agree on one key.
[[nodiscard]] const TestKeyPair& test_key(const std::string& name, int bits = 2048);

// Writes `content` to `name` inside the process's private temporary folder (removed at exit);
// returns its path.
[[nodiscard]] std::string write_temp_file(const std::string& name, const std::string& content);

}  // namespace seatflow::testing

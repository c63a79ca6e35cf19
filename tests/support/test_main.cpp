// The main of the test binaries: GoogleTest's, after keeping OpenSSL's global state until the
// process is gone, as the server does (codec/crypto.hpp: the engines these tests start run
// detached actors whose threads free their OpenSSL state after the process may be exiting).
#include <gtest/gtest.h>

#include <cstdio>

#include "codec/crypto.hpp"

int main(int argc, char** argv) {
  if (!seatflow::codec::keep_openssl_until_exit()) {
    std::fputs("tests: OpenSSL failed to initialise\n", stderr);
    return 1;
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

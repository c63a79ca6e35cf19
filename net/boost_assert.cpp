// Boost's assertion handler (BOOST_ENABLE_ASSERT_HANDLER is defined for every SeatFlow target, so
// BOOST_ASSERT and BOOST_VERIFY land here). SeatFlow keeps assertions on in every build type, and a
// failed Boost assertion aborts like a failed assert() — except one that Boost 1.74 gets wrong on
// input any client can send.
#include <boost/assert.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// Beast 1.74 asserts `n >= 5` when it resumes parsing a final chunk ("0\r\n") whose trailer has not
// arrived yet, but 4 buffered bytes are legal there when the previous chunk ended without a
// pending CRLF ("0\r\n" in one read, "\r" in the next); the code that follows handles them
// correctly (it asks for more bytes). Beast relaxed the assertion in Boost 1.86. Aborting on it
// would let a client stop the engine with three small writes (tests/functional/
// hostile_input_test.cpp, FinalChunkArrivingByteByByteIsAnsweredNotACrash; found by fuzz_http).
bool is_known_false_assertion(const char* expr, const char* file) {
  return std::strcmp(expr, "n >= 5") == 0 &&
         std::strstr(file, "boost/beast/http/impl/basic_parser.ipp") != nullptr;
}

}  // namespace

namespace boost {

void assertion_failed(char const* expr, char const* function, char const* file, long line) {
  if (is_known_false_assertion(expr, file)) {
    return;
  }
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed.\n", file, line, function, expr);
  std::abort();
}

void assertion_failed_msg(char const* expr, char const* msg, char const* function, char const* file,
                          long line) {
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed: %s\n", file, line, function, expr, msg);
  std::abort();
}

}  // namespace boost

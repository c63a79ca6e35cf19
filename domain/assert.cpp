// SEATFLOW_ASSERT's failure path (see assert.hpp).
#include "domain/assert.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace seatflow::domain {

void assertion_failed(const char* expression, const char* file, int line,
                      const char* function) noexcept {
  char text[1024];
  const int length =
      std::snprintf(text, sizeof text, "seatflow: assertion failed: %s at %s:%d in %s\n",
                    expression, file, line, function);
  if (length > 0) {
    const auto size = static_cast<std::size_t>(length) < sizeof text
                          ? static_cast<std::size_t>(length)
                          : sizeof text - 1;
    // One write, so lines from two threads never interleave; nothing else can be done if it fails.
    (void)!::write(STDERR_FILENO, text, size);
  }
  std::abort();
}

}  // namespace seatflow::domain

// SEATFLOW_ASSERT(condition): what a caller must guarantee (an id non-empty and bounded, an amount
// above zero, a move the state machine allows), checked in every build type. A false condition is
// a programmer error: the expression and its location go to stderr, then the process aborts (a
// core and the supervisor's restart, never a wrong row). Operating errors are Results, not these.
#pragma once

namespace seatflow::domain {

// Writes "seatflow: assertion failed: <expression> at <file>:<line> in <function>" to stderr with
// one write, then std::abort(). Safe from any thread.
[[noreturn]] void assertion_failed(const char* expression, const char* file, int line,
                                   const char* function) noexcept;

}  // namespace seatflow::domain

#define SEATFLOW_ASSERT(condition)                                                    \
  ((condition) ? static_cast<void>(0)                                                 \
               : ::seatflow::domain::assertion_failed(#condition, __FILE__, __LINE__, \
                                                      static_cast<const char*>(__func__)))

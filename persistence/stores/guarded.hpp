// A store call at the persistence border: the call watchdog's scope around it, and the exceptions
// libpqxx throws turned into the one failure callers see, so that no exception leaves a store.
#pragma once

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "persistence/drivers/errc.hpp"
#include "persistence/drivers/pg.hpp"

namespace seatflow::persistence {

// Drops a broken connection (the next call makes a new one), logs the operation and the error's
// class (never its text: it may quote values) and answers errc::pg_unavailable.
[[nodiscard]] Failure store_unavailable(PgSession& pg, const char* operation,
                                        const std::exception& error);

// `fn()` (returning a T, a Result<T>, or nothing for Result<void>) under the session's call
// deadline. An exception is first offered to `refine(error)`: a failure of its own for one that
// says something about the request (a unique key taken, a date that is none), std::nullopt for one
// that only says the store failed, which becomes store_unavailable(pg, operation, error).
template <class T, class Fn, class Refine>
[[nodiscard]] Result<T> guarded(PgSession& pg, const char* operation, Fn&& fn, Refine&& refine) {
  try {
    const auto call = pg.watch_call();
    if constexpr (std::is_void_v<std::invoke_result_t<Fn&>>) {
      fn();
      return {};
    } else {
      return fn();
    }
  } catch (const std::exception& error) {
    if (std::optional<Failure> refined = refine(error)) {
      return std::move(*refined);
    }
    return store_unavailable(pg, operation, error);
  }
}

// The same, every exception a store failure.
template <class T, class Fn>
[[nodiscard]] Result<T> guarded(PgSession& pg, const char* operation, Fn&& fn) {
  return guarded<T>(pg, operation, std::forward<Fn>(fn),
                    [](const std::exception&) { return std::optional<Failure>{}; });
}

}  // namespace seatflow::persistence

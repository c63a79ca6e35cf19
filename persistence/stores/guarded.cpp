// The persistence border's one translation of a libpqxx exception.
#include "persistence/stores/guarded.hpp"

#include "persistence/drivers/log.hpp"

namespace seatflow::persistence {

Failure store_unavailable(PgSession& pg, const char* operation, const std::exception& error) {
  const auto kind = classify(error);
  pg.reset_if_broken(error);
  logger().warn("event=store_unavailable operation={} error_class={}", operation,
                kind == PgErrorClass::retryable ? "retryable" : "permanent");
  return refused(errc::pg_unavailable, "storage unavailable");
}

}  // namespace seatflow::persistence

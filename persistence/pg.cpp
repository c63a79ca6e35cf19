// PostgreSQL session: lazy connection with a statement timeout, and error classification.
#include "persistence/pg.hpp"

#include "persistence/sql.hpp"

namespace seatflow::persistence {

std::string to_pg_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += i == 0 ? "\"" : ",\"";
    for (const char c : items[i]) {
      if (c == '"' || c == '\\') {
        out.push_back('\\');
      }
      out.push_back(c);
    }
    out.push_back('"');
  }
  return out + "}";
}

std::string to_pg_array(const std::vector<std::int64_t>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) {
      out.push_back(',');
    }
    out += std::to_string(items[i]);
  }
  return out + "}";
}

PgErrorClass classify(const std::exception& error) {
  if (dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr ||
      dynamic_cast<const pqxx::in_doubt_error*>(&error) != nullptr) {
    return PgErrorClass::retryable;
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error)) {
    const std::string state = sql->sqlstate();
    if (state == "23505") {
      return PgErrorClass::unique_violation;
    }
    // 40xxx serialization/deadlock, 53xxx resources, 57xxx operator intervention
    // (shutdown, statement timeout 57014), 08xxx connection exceptions.
    if (state.starts_with("40") || state.starts_with("53") || state.starts_with("57") ||
        state.starts_with("08") || state.empty()) {
      return PgErrorClass::retryable;
    }
    return PgErrorClass::permanent;
  }
  return PgErrorClass::retryable;
}

PgSession::PgSession(std::string dsn, std::uint32_t statement_timeout_ms, Failpoints* failpoints)
    : dsn_(std::move(dsn)), statement_timeout_ms_(statement_timeout_ms), failpoints_(failpoints) {}

pqxx::connection& PgSession::connection() {
  if (conn_ && conn_->is_open()) {
    return *conn_;
  }
  conn_.reset();
  if (failpoints_ != nullptr && failpoints_->hit(FailpointId::pg_connect)) {
    throw pqxx::broken_connection("failpoint pg_connect");
  }
  auto conn = std::make_unique<pqxx::connection>(dsn_);
  {
    pqxx::nontransaction tx(*conn);
    tx.exec("SET statement_timeout = " + std::to_string(statement_timeout_ms_));
    tx.exec("SET application_name = 'seatflow'");
  }
  prepare_statements(*conn);
  conn_ = std::move(conn);
  return *conn_;
}

void PgSession::reset() {
  conn_.reset();
}

bool PgSession::reset_if_broken(const std::exception& error) {
  const bool broken =
      !connected() || dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr;
  if (broken) {
    reset();
  }
  return broken;
}

bool PgSession::connected() const {
  return conn_ && conn_->is_open();
}

}  // namespace seatflow::persistence

// PostgreSQL session: lazy connection with its limits and a watched socket, error classification.
#include "persistence/drivers/pg.hpp"

#include <stdexcept>
#include <utility>

#include "codec/json_members.hpp"

namespace seatflow::persistence {
namespace {

// Whether this session could write: not a standby and not read-only by default.
constexpr std::string_view kPrimaryStateSql =
    "SELECT pg_is_in_recovery(), current_setting('transaction_read_only')";

}  // namespace

std::string to_pg_array(const std::vector<std::string>& items) {
  // Every element quoted; inside the quotes only a quote and a backslash are escaped.
  std::size_t size = 2;
  for (const auto& item : items) {
    size += item.size() + 3;
  }
  std::string out;
  out.reserve(size);
  out.push_back('{');
  for (const auto& item : items) {
    if (out.size() > 1) {
      out.push_back(',');
    }
    out.push_back('"');
    std::size_t run = 0;  // start of the characters not yet copied
    for (std::size_t i = 0; i < item.size(); ++i) {
      if (item[i] == '"' || item[i] == '\\') {
        out.append(item, run, i - run);
        out.push_back('\\');
        run = i;
      }
    }
    out.append(item, run, item.size() - run);
    out.push_back('"');
  }
  out.push_back('}');
  return out;
}

std::vector<std::string> json_strings(std::string_view json) {
  auto strings = codec::json_string_array(json);
  if (!strings) {
    throw std::runtime_error("a seat list is not a JSON array of strings");
  }
  return std::move(*strings);
}

std::vector<std::string> json_strings(const pqxx::field& field) {
  // A view of the field's bytes: no copy (SQL NULL reads as "", which is refused).
  return json_strings(std::string_view{field.c_str(), field.size()});
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
    // (shutdown, statement timeout 57014), 08xxx connection exceptions, 25006 read-only
    // transaction (a standby or a server switched to read-only: another server may take over),
    // SF001 the event slot missing (it is made again).
    if (state.starts_with("40") || state.starts_with("53") || state.starts_with("57") ||
        state.starts_with("08") || state == "25006" || state == "55P03" ||
        state == kSqlStateEventSlotUnusable || state.empty()) {
      return PgErrorClass::retryable;
    }
    return PgErrorClass::permanent;
  }
  return PgErrorClass::retryable;
}

bool needs_reset(const std::exception& error) {
  if (dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr ||
      dynamic_cast<const pqxx::in_doubt_error*>(&error) != nullptr) {
    return true;
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error)) {
    const std::string state = sql->sqlstate();
    return state.starts_with("08") || state == "25006" || state == "57P01" || state == "57P02" ||
           state == "57P03";
  }
  return false;
}

PgPrimaryState read_primary_state(pqxx::connection& conn) {
  pqxx::nontransaction tx(conn);
  const auto row = tx.exec1(std::string(kPrimaryStateSql));
  return {row[0].as<bool>(), row[1].as<std::string>() == "on"};
}

PgSession::PgSession(std::string dsn, std::uint32_t statement_timeout_ms, Failpoints* failpoints,
                     ConnectionSetup setup)
    : PgSession(
          std::move(dsn),
          [statement_timeout_ms] {
            PgLimits limits;
            limits.statement_ms_max = statement_timeout_ms;
            return limits;
          }(),
          failpoints, nullptr, setup) {}

PgSession::PgSession(std::string dsn, const PgLimits& limits, Failpoints* failpoints,
                     std::shared_ptr<CallWatchdog> watchdog, ConnectionSetup setup)
    : dsn_(with_connection_defaults(dsn, limits)),
      limits_(limits),
      failpoints_(failpoints),
      setup_(setup),
      watchdog_(watchdog ? std::move(watchdog) : std::make_shared<CallWatchdog>()) {}

PgSession::~PgSession() {
  reset();
}

CallScope PgSession::watch_call(Clock::time_point deadline) {
  return CallScope(*watchdog_, deadline, socket_);
}

CallScope PgSession::watch_call() {
  return watch_call(Clock::now() + std::chrono::milliseconds(limits_.call_ms_max));
}

pqxx::connection& PgSession::connection() {
  if (watchdog_->aborted()) {
    reset();
    throw pqxx::broken_connection("stopping: store calls are aborted");
  }
  // A socket the watchdog cut after its last statement still looks open to libpq.
  if (conn_ && conn_->is_open() && !socket_.cut()) {
    return *conn_;
  }
  reset();
  if (socket_.expired()) {
    throw pqxx::broken_connection("call deadline passed");
  }
  if (failpoints_ != nullptr && failpoints_->hit(FailpointId::pg_connect)) {
    throw pqxx::broken_connection("failpoint pg_connect");
  }
  auto conn = std::make_unique<pqxx::connection>(dsn_);
  // libpqxx 6.4 silently reconnects a broken connection when the next transaction starts; that
  // socket would be unknown to the watchdog (and the reconnect outside any scope), so reconnects
  // happen here only. The switch is deprecated because reactivation itself will go away.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  conn->inhibit_reactivation(true);
#pragma GCC diagnostic pop
  socket_.watch(conn->sock());
  try {
    {
      pqxx::nontransaction tx(*conn);
      tx.exec(session_setup_sql(limits_));
    }
    if (setup_ != nullptr) {
      setup_(*conn);
    }
  } catch (...) {
    conn.reset();
    socket_.forget();
    throw;
  }
  conn_ = std::move(conn);
  plans_made_at_ = Clock::now();
  return *conn_;
}

bool PgSession::refresh_plans_if_due(pqxx::transaction_base& tx) {
  const auto now = Clock::now();
  if (limits_.plan_refresh_ms == 0 ||
      now - plans_made_at_ < std::chrono::milliseconds(limits_.plan_refresh_ms)) {
    return false;
  }
  (void)tx.exec("DISCARD PLANS");
  plans_made_at_ = now;
  return true;
}

void PgSession::reset() {
  conn_.reset();
  socket_.forget();
}

bool PgSession::reset_if_broken(const std::exception& error) {
  const bool broken = !connected() || needs_reset(error);
  if (broken) {
    reset();
  }
  return broken;
}

bool PgSession::connected() const {
  return conn_ && conn_->is_open();
}

}  // namespace seatflow::persistence

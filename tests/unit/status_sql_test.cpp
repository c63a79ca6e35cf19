// The status SQL of persistence/ against the domain's transition tables: each move statement's
// statuses, read back from its text, are what domain::next_*_status answers for every status; the
// derived status sets are the domain's; and no persistence source writes a payment or order status
// as a literal (so changing a domain table without the SQL, or the SQL without the table, fails).
#include "persistence/stores/status_sql.hpp"

#include "persistence/stores/migrations.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace seatflow::persistence {
namespace {
namespace SEATFLOW_UNITY_ID {

using domain::OrderStatus;
using domain::PaymentStatus;

// A CAS as its statement writes it: the status it sets and the statuses its WHERE accepts.
struct Cas {
  std::int64_t to = -1;
  std::set<std::int64_t> from;
};

// Reads `SET status = N` and the WHERE's `status = N` or `status IN (a, b, ...)` back from a move
// statement; nullopt when either is missing.
std::optional<Cas> read_cas(const std::string& sql) {
  static const std::regex kSet(R"(SET status = (\d+),)");
  static const std::regex kWhere(R"(WHERE [^"]*?\bstatus (?:= (\d+)|IN \(([\d, ]+)\)))");
  std::smatch set;
  std::smatch where;
  if (!std::regex_search(sql, set, kSet) || !std::regex_search(sql, where, kWhere)) {
    return std::nullopt;
  }
  Cas cas;
  cas.to = std::stoll(set[1].str());
  if (where[1].matched) {
    cas.from.insert(std::stoll(where[1].str()));
  } else {
    std::istringstream list(where[2].str());
    for (std::string item; std::getline(list, item, ',');) {
      cas.from.insert(std::stoll(item));
    }
  }
  return cas;
}

// The CAS of `sql` accepts exactly the statuses `next` moves and sets the status they move to.
template <class Status, std::size_t N, class Next>
void expect_cas_of(const std::string& sql, const std::array<Status, N>& all, Next next) {
  SCOPED_TRACE(sql);
  const auto cas = read_cas(sql);
  ASSERT_TRUE(cas.has_value()) << "no SET status / WHERE status in the statement";
  for (const auto status : all) {
    const auto to = next(status);
    SCOPED_TRACE("from status " + status_sql::literal(status));
    EXPECT_EQ(cas->from.contains(status_sql::code(status)), to.has_value());
    if (to) {
      EXPECT_EQ(cas->to, status_sql::code(*to));
    }
  }
}

TEST(StatusSql, CloseCancelAndRefundStatementsAreTheDomainsMovesForEveryStatus) {
  for (const auto* end : {&close_end(), &refund_end()}) {
    SCOPED_TRACE(end->operation);
    expect_cas_of(end->payment_cas, domain::kPaymentStatuses, [end](PaymentStatus status) {
      return domain::next_payment_status(status, end->payment_event);
    });
    expect_cas_of(end->order_cas, domain::kOrderStatuses, [end](OrderStatus status) {
      return domain::next_order_status(status, end->order_event);
    });
    const auto cas = read_cas(end->payment_cas);
    ASSERT_TRUE(cas.has_value());
    EXPECT_EQ(status_sql::code(end->target), cas->to);
  }
}

TEST(StatusSql, ThePairsAreTheDomainsClosePlusCancelAndRefundPlusRefund) {
  EXPECT_EQ(close_end().payment_event, domain::PaymentEvent::close);
  EXPECT_EQ(close_end().order_event, domain::OrderEvent::cancel);
  EXPECT_FALSE(close_end().seats_sold);
  EXPECT_EQ(refund_end().payment_event, domain::PaymentEvent::refund);
  EXPECT_EQ(refund_end().order_event, domain::OrderEvent::refund);
  EXPECT_TRUE(refund_end().seats_sold);
}

TEST(StatusSql, EveryStatusAMoveCannotStartFromHasItsRefusal) {
  for (const auto* end : {&close_end(), &refund_end()}) {
    for (const auto status : domain::kPaymentStatuses) {
      if (status != end->target && !domain::next_payment_status(status, end->payment_event)) {
        EXPECT_FALSE(end->refusal(status).empty())
            << end->operation << " from " << status_sql::literal(status);
      }
    }
  }
  // The answers the API has always given.
  EXPECT_EQ(close_end().refusal(PaymentStatus::success), "already paid");
  EXPECT_EQ(close_end().refusal(PaymentStatus::refunded), "already refunded");
  EXPECT_EQ(refund_end().refusal(PaymentStatus::pending), "the payment is not paid");
}

TEST(StatusSql, ConditionsAreWrittenAsAskedInTheOrderGiven) {
  EXPECT_EQ(status_sql::in("status", std::vector{PaymentStatus::pending, PaymentStatus::failed}),
            "status IN (0, 2)");
  EXPECT_EQ(status_sql::in("o.status", std::vector{OrderStatus::paid}), "o.status = 1");
  EXPECT_EQ(
      status_sql::not_in("p.status", std::vector{PaymentStatus::success, PaymentStatus::refunded}),
      "p.status NOT IN (1, 4)");
  EXPECT_EQ(status_sql::not_in("p.status", std::vector{PaymentStatus::closed}), "p.status <> 3");
  EXPECT_EQ(status_sql::codes(std::vector{OrderStatus::cancelled, OrderStatus::refunded}),
            (std::vector<std::int64_t>{2, 3}));
}

TEST(StatusSql, DerivedSetsAreTheDomainsPredicatesOverEveryStatus) {
  const auto live = status_sql::live_orders();
  const auto taken = status_sql::money_taken_payments();
  for (const auto status : domain::kOrderStatuses) {
    const auto seats = domain::seat_state_of(status);
    EXPECT_EQ(std::find(live.begin(), live.end(), status) != live.end(),
              seats != domain::SeatState::free);
    for (const auto state :
         {domain::SeatState::free, domain::SeatState::locked, domain::SeatState::sold}) {
      const auto with = status_sql::orders_with_seats(state);
      EXPECT_EQ(std::find(with.begin(), with.end(), status) != with.end(), seats == state);
    }
  }
  for (const auto status : domain::kPaymentStatuses) {
    EXPECT_EQ(std::find(taken.begin(), taken.end(), status) != taken.end(),
              domain::money_taken(status));
  }
}

// ---- No literal ----------------------------------------------------------------------------

// A file's text without its comments (a `//` inside a string literal cuts the rest of its line,
// which can only hide text from the scan, never add to it).
std::string without_comments(const std::string& text) {
  static const std::regex kComment(R"(//[^\n]*|/\*[\s\S]*?\*/)");
  return std::regex_replace(text, kComment, "");
}

// The places in `code` that write a payment, order or log status as a number: a SQL comparison or
// SET (`status = 1`, `status <> 1`, `status IN (0, 2)`, `status NOT IN (1, 4)`), a C++ comparison
// (`status == 1`, `*payment_status == 1`, `.as<int>() != 0`), or a status array literal
// (`"{2,3}"`). A member's default (`int status = 0;`) is not one.
std::vector<std::string> status_literals(const std::string& code) {
  static const std::vector<std::regex> kPatterns = {
      std::regex(R"(\bstatus\s*(=|==|!=|<>)\s*\d+(?!\d*\s*;))"),
      std::regex(R"(\b(?!http_)\w+_status\w*\s*(==|!=)\s*\d)"),
      std::regex(R"(\bstatus\s+(NOT\s+)?IN\s*\(\s*\d)", std::regex::icase),
      std::regex(R"(as<int>\(\)\s*(==|!=)\s*\d)"),
      std::regex(R"("\{\d+(,\d+)*\}")"),
      std::regex(R"(\bstatus\s+BETWEEN\s+\d)", std::regex::icase),
      std::regex(R"(\bstatus\s+SMALLINT\b[^,\n]*\bDEFAULT\s+\d)", std::regex::icase),
      // A refund's or a bill run's state by its name, as SQL text (domain/records.hpp).
      std::regex(R"('(pending|processing|succeeded|failed|abnormal|running|done|not_ready)')"),
  };
  std::vector<std::string> found;
  for (const auto& pattern : kPatterns) {
    for (std::sregex_iterator it(code.begin(), code.end(), pattern), end; it != end; ++it) {
      found.push_back(it->str());
    }
  }
  return found;
}

TEST(StatusSql, TheScanFindsTheLiteralsStatementsUsedToHave) {
  for (const std::string code :
       {"\"SET status = 3, updated_at = now() WHERE payment_no = $1 AND status IN (0, 2) \"",
        "\"WHERE o.status NOT IN (0, 1) AND\"", "\"AND p.status = 0 \"",
        "if (order[0][0].as<int>() != 0) {", "const bool paid = *payment_status == 1;",
        "return \"{2,3}\";", "status SMALLINT NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 3)",
        "\"WHERE state = 'running' AND holder = $1\"",
        "CHECK (status IN ('pending', 'succeeded', 'failed'))"}) {
    EXPECT_FALSE(status_literals(code).empty()) << code;
  }
  for (const std::string code :
       {"int status = 0;", "std::int64_t status = 0;  // x", "\"SELECT o.status, o.show_id\"",
        "http_status == 503", "\"p.status = $2 AND o.status = $3\"",
        "status SMALLINT NOT NULL DEFAULT {{order.pending}}", "IF status = 'lost' THEN",
        "\"WHERE state = \" + named(BillRunState::running)"}) {
    EXPECT_TRUE(status_literals(code).empty()) << code;
  }
}

TEST(StatusSql, NoPersistenceSourceWritesAStatusAsALiteral) {
  const std::filesystem::path root = std::filesystem::path(SEATFLOW_SOURCE_DIR) / "persistence";
  std::size_t scanned = 0;
  bool saw_order_store = false;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) {
      continue;
    }
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    ++scanned;
    saw_order_store = saw_order_store || entry.path().filename() == "order_store.cpp";
    for (const auto& literal : status_literals(without_comments(text.str()))) {
      ADD_FAILURE() << entry.path().string() << ": status literal `" << literal
                    << "`: build it from domain/ (persistence/stores/status_sql.hpp)";
    }
  }
  EXPECT_GE(scanned, 20u);
  EXPECT_TRUE(saw_order_store) << "the scan did not reach persistence/stores/order_store.cpp";
}

// The .sql files under persistence/migrations write every state as a `{{…}}` name the domain
// renders; none as a number or a quoted state name.
TEST(StatusSql, NoMigrationWritesAStateAsALiteral) {
  const std::filesystem::path root =
      std::filesystem::path(SEATFLOW_SOURCE_DIR) / "persistence" / "migrations";
  std::size_t scanned = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".sql") {
      continue;
    }
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    ++scanned;
    static const std::regex kSqlComment(R"(--[^\n]*)");
    // In SQL a status compared with a number ends its statement too (`WHERE status = 0;`).
    static const std::regex kSqlStatus(R"(\bstatus\s*(=|<>)\s*\d)", std::regex::icase);
    const auto sql = std::regex_replace(text.str(), kSqlComment, "");
    auto found = status_literals(sql);
    for (std::sregex_iterator it(sql.begin(), sql.end(), kSqlStatus), end; it != end; ++it) {
      found.push_back(it->str());
    }
    for (const auto& literal : found) {
      ADD_FAILURE() << entry.path().string() << ": state literal `" << literal
                    << "`: write it as {{order.paid}}, {{refund.pending}}, … (render_migration)";
    }
  }
  EXPECT_GE(scanned, 15u);
}

// Every migration renders, and renders the SQL its version was applied with.
TEST(StatusSql, MigrationsRenderTheDomainsValues) {
  std::string all;
  for (const auto& migration : migrations()) {
    for (const auto text : {migration.sql, migration.report_sql}) {
      auto rendered = render_migration(text);
      ASSERT_TRUE(rendered.ok()) << migration.version << ": " << rendered.detail();
      EXPECT_EQ(rendered.value().find("{{"), std::string::npos) << migration.version;
      all += rendered.value();
    }
  }
  for (const auto* applied :
       {"status       SMALLINT NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 3),",
        "status           SMALLINT NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 4),",
        "ON order_info (expires_at) WHERE status = 0;", "WHERE o.status IN (0, 1);",
        "CHECK (status IN ('pending', 'succeeded', 'failed'))",
        "CHECK (state IN ('running', 'done', 'failed', 'not_ready'))",
        "ON bill_run (channel, bill_date) WHERE state = 'running';"}) {
    EXPECT_NE(all.find(applied), std::string::npos) << applied;
  }
  EXPECT_EQ(render_migration("WHERE status = {{order.shipped}}").error(), errc::conflict);
  EXPECT_EQ(render_migration("WHERE status = {{order.paid").error(), errc::conflict);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::persistence

// to_pg_array and json_strings against the test PostgreSQL: what the server reads back from the
// literal is exactly the strings and numbers given, whatever characters they hold, and a seat list
// the server writes as JSON reads back as the strings it holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "persistence/drivers/pg.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

// The elements PostgreSQL reads from `literal` as text[], each as JSON so that a NULL would show.
std::vector<std::string> server_reads(pqxx::connection& conn, const std::string& literal) {
  pqxx::work tx(conn);
  std::vector<std::string> out;
  for (const auto& row : tx.exec_params(
           "SELECT coalesce(to_json(e)::text, 'null') FROM unnest($1::text[]) WITH ORDINALITY "
           "AS t(e, n) ORDER BY n",
           literal)) {
    out.push_back(row[0].as<std::string>());
  }
  return out;
}

TEST(PgArrayTest, TextElementsReachTheServerExactly) {
  testing::Stores s;
  const std::vector<std::string> items = {"R1S0",
                                          "",
                                          "NULL",
                                          "a,b",
                                          "{x}",
                                          "quote\"d",
                                          "back\\slash",
                                          "\\\"",
                                          " spaced ",
                                          "座位",
                                          std::string(300, 'z') + "\"" + std::string(5, '\\')};
  const auto read = server_reads(s.pg(), persistence::to_pg_array(items));
  ASSERT_EQ(read.size(), items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    pqxx::work tx(s.pg());
    const auto expected =
        tx.exec_params("SELECT to_json($1::text)::text", items[i])[0][0].as<std::string>();
    EXPECT_EQ(read[i], expected) << "element " << i;
  }
  EXPECT_TRUE(server_reads(s.pg(), persistence::to_pg_array(std::vector<std::string>{})).empty());
}

TEST(PgArrayTest, IntegerElementsReachTheServerExactly) {
  testing::Stores s;
  const std::vector<std::int64_t> items = {0, -1, 42, std::numeric_limits<std::int64_t>::max(),
                                           std::numeric_limits<std::int64_t>::min()};
  pqxx::work tx(s.pg());
  const auto rows = tx.exec_params(
      "SELECT e::text FROM unnest($1::bigint[]) WITH ORDINALITY AS t(e, n) ORDER BY n",
      persistence::to_pg_array(items));
  ASSERT_EQ(rows.size(), items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(rows[i][0].as<std::string>(), std::to_string(items[i]));
  }
}

// The statements hand seat lists to the engine as to_json(text[]) or json_agg; json_strings reads
// the field's bytes in place. The round trip keeps every string; NULL and non-lists are refused.
TEST(PgArrayTest, SeatListsTheServerWritesAsJsonReadBackExactly) {
  testing::Stores s;
  const std::vector<std::string> items = {"R1S0",      "",     "quote\"d", "back\\slash",
                                          "tab\there", "座位", "ctl\x01",  std::string(300, 'z')};
  pqxx::work tx(s.pg());
  const auto literal = persistence::to_pg_array(items);
  const auto row = tx.exec_params(
      "SELECT to_json($1::text[]), (SELECT json_agg(e ORDER BY n) FROM unnest($1::text[]) "
      "WITH ORDINALITY AS t(e, n)), to_json('{}'::text[]), NULL::json, to_json(ARRAY[1, 2]), "
      "json_build_object('a', $1::text[])",
      literal)[0];
  EXPECT_EQ(persistence::json_strings(row[0]), items);
  EXPECT_EQ(persistence::json_strings(row[1]), items);
  EXPECT_TRUE(persistence::json_strings(row[2]).empty());
  EXPECT_THROW((void)persistence::json_strings(row[3]), std::runtime_error);
  EXPECT_THROW((void)persistence::json_strings(row[4]), std::runtime_error);
  EXPECT_THROW((void)persistence::json_strings(row[5]), std::runtime_error);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

// The migrations the build embedded from persistence/migrations/*.sql: every file is there, in
// version order, with its title and its text byte for byte (the schema is the files, not a copy).
#include "persistence/stores/migrations.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace seatflow::persistence {
namespace {
namespace SEATFLOW_UNITY_ID {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(MigrationsEmbed, EveryFileIsEmbeddedInVersionOrderWithItsTextAndTitle) {
  const std::filesystem::path dir = SEATFLOW_MIGRATIONS_DIR;
  std::map<int, std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (name.ends_with(".sql") && !name.ends_with(".report.sql")) {
      files.emplace(std::stoi(name.substr(0, 4)), entry.path());
    }
  }
  const auto& all = migrations();
  ASSERT_EQ(all.size(), files.size());
  ASSERT_GE(all.size(), 5u);
  int last = 0;
  for (const auto& migration : all) {
    SCOPED_TRACE(migration.version);
    EXPECT_GT(migration.version, last);
    last = migration.version;
    ASSERT_EQ(files.count(migration.version), 1u);
    const auto& path = files.at(migration.version);
    const auto text = read_file(path);
    EXPECT_EQ(migration.sql, text);
    EXPECT_FALSE(migration.name.empty());
    EXPECT_EQ("-- " + std::string(migration.name) + "\n",
              text.substr(0, migration.name.size() + 4));
    auto report = path;
    report.replace_extension(".report.sql");
    EXPECT_EQ(migration.report_sql,
              std::filesystem::exists(report) ? read_file(report) : std::string());
  }
  // Migration 3 reports what its backfill found.
  EXPECT_NE(all.at(2).report_sql.find("seat claims:"), std::string_view::npos);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::persistence

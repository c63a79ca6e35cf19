// resp_command writes exactly what hiredis's own formatter writes for the same arguments: empty,
// binary (CR, LF, NUL), long, and many of them.
#include <gtest/gtest.h>

#include <hiredis/hiredis.h>

#include <string>
#include <vector>

#include "persistence/drivers/redis.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

std::string hiredis_formats(const std::vector<std::string>& argv) {
  std::vector<const char*> ptrs;
  std::vector<std::size_t> lens;
  for (const auto& arg : argv) {
    ptrs.push_back(arg.data());
    lens.push_back(arg.size());
  }
  char* raw = nullptr;
  const auto len =
      redisFormatCommandArgv(&raw, static_cast<int>(argv.size()), ptrs.data(), lens.data());
  EXPECT_GT(len, 0);
  std::string out(raw, static_cast<std::size_t>(len));
  redisFreeCommand(raw);
  return out;
}

TEST(RespCommand, WritesWhatHiredisWrites) {
  const std::vector<std::vector<std::string>> commands = {
      {"PING"},
      {"HSET", "seatflow:seats:{s1}", "R1S0", "2:o1"},
      {"SET", "", ""},
      {"SET", "k", std::string("a\r\nb\0c", 6)},
      {"SET", "k", std::string(100000, 'x')},
  };
  for (const auto& argv : commands) {
    EXPECT_EQ(persistence::resp_command(argv), hiredis_formats(argv)) << argv.front();
  }
  std::vector<std::string> many = {"EVALSHA", "sha", "12"};
  for (int i = 0; i < 1200; ++i) {
    many.push_back("arg" + std::to_string(i));
  }
  EXPECT_EQ(persistence::resp_command(many), hiredis_formats(many));
  EXPECT_EQ(persistence::resp_command({"GET", "k"}), "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

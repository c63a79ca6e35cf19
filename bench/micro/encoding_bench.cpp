// The Redis protocol formatting of the callback path's commands, SeatFlow's resp_command beside
// hiredis's own formatter (what redisAppendCommandArgv runs), and the PostgreSQL array literal.
#include <benchmark/benchmark.h>

#include <hiredis/hiredis.h>

#include <string>
#include <vector>

#include "persistence/drivers/pg.hpp"
#include "persistence/drivers/redis.hpp"

namespace {

// An event's XADD as the relay sends it (14 arguments).
std::vector<std::string> xadd() {
  return {"XADD",     "seatflow:events",
          "MAXLEN",   "~",
          "1000000",  "*",
          "event_id", "01JEXAMPLE0000000000000000",
          "type",     "payment.paid",
          "payment",  "P-bench-000000123",
          "payload",  std::string(180, 'j')};
}

// A batch's mark_sold script call: 24 sales of two seats each.
std::vector<std::string> mark_sold_all() {
  std::vector<std::string> argv = {"EVALSHA", std::string(40, 'a'), "24"};
  for (int k = 0; k < 24; ++k) {
    argv.push_back("seatflow:seats:{S-bench-" + std::to_string(k) + "}");
  }
  for (int k = 0; k < 24; ++k) {
    argv.push_back("O-bench-00000" + std::to_string(k));
    argv.emplace_back("2");
    argv.push_back("R" + std::to_string(k) + "S0");
    argv.push_back("R" + std::to_string(k) + "S1");
  }
  return argv;
}

void run_resp(benchmark::State& state, const std::vector<std::string>& argv) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(seatflow::persistence::resp_command(argv));
  }
}

void run_hiredis(benchmark::State& state, const std::vector<std::string>& argv) {
  std::vector<const char*> ptrs;
  std::vector<std::size_t> lens;
  for (auto _ : state) {
    // As append_command did before resp_command: pointer and length vectors, then the formatter.
    ptrs.clear();
    lens.clear();
    for (const auto& arg : argv) {
      ptrs.push_back(arg.data());
      lens.push_back(arg.size());
    }
    char* out = nullptr;
    benchmark::DoNotOptimize(
        redisFormatCommandArgv(&out, static_cast<int>(argv.size()), ptrs.data(), lens.data()));
    redisFreeCommand(out);
  }
}

void BM_RespCommandXadd(benchmark::State& state) {
  run_resp(state, xadd());
}
BENCHMARK(BM_RespCommandXadd);
void BM_HiredisFormatXadd(benchmark::State& state) {
  run_hiredis(state, xadd());
}
BENCHMARK(BM_HiredisFormatXadd);
void BM_RespCommandMarkSoldAll(benchmark::State& state) {
  run_resp(state, mark_sold_all());
}
BENCHMARK(BM_RespCommandMarkSoldAll);
void BM_HiredisFormatMarkSoldAll(benchmark::State& state) {
  run_hiredis(state, mark_sold_all());
}
BENCHMARK(BM_HiredisFormatMarkSoldAll);

// A batch's payment numbers as the executor sends them: 24 elements.
void BM_ToPgArray24(benchmark::State& state) {
  std::vector<std::string> items;
  for (int k = 0; k < 24; ++k) {
    items.push_back("P-bench-0000" + std::to_string(100000 + k));
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(seatflow::persistence::to_pg_array(items));
  }
}
BENCHMARK(BM_ToPgArray24);

}  // namespace

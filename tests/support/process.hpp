// Runs the real seatflow binary for functional tests: fork/exec, captured output, bounded stop.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace seatflow::testing {

// Environment overrides for a child: name → value, or nullopt to remove the name; everything else
// is inherited from the test process.
using EnvOverrides = std::map<std::string, std::optional<std::string>>;

// $SEATFLOW_BINARY; the calling test fails (and "" is returned) when it is unset.
[[nodiscard]] std::string seatflow_binary();

// A loopback TCP port that was free a moment ago (bind 127.0.0.1:0, read it, close).
[[nodiscard]] std::uint16_t free_port();

// Exit code of a finished child: its exit status, or 128 + signal number when killed.
// -1 while it still runs (or when it could not be waited for).
struct ExitResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr interleaved
  bool timed_out = false;
};

// Runs the binary with `args` to completion, killing it after `timeout`.
[[nodiscard]] ExitResult run_to_exit(const std::vector<std::string>& args,
                                     const EnvOverrides& env = {},
                                     std::chrono::milliseconds timeout = std::chrono::seconds(20));

// One child process of the binary. Its stdout and stderr go to a temporary file.
class EngineProcess {
 public:
  EngineProcess(const std::vector<std::string>& args, const EnvOverrides& env);
  ~EngineProcess();
  EngineProcess(const EngineProcess&) = delete;
  EngineProcess& operator=(const EngineProcess&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] bool started() const { return pid_ > 0; }
  // True while the child has not exited (reaps it when it has).
  [[nodiscard]] bool running();
  // Polls GET /healthz on the port until it answers 200, or the child exits, or the time is up.
  [[nodiscard]] bool wait_healthy(std::uint16_t port,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Waits for the child to exit by itself; its exit code, or -1 when it did not in time.
  int wait_exit(std::chrono::milliseconds timeout);
  // SIGTERM, then a bounded wait, then SIGKILL. Returns the exit code (see ExitResult).
  int stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // Sends a signal without waiting.
  void signal(int signal_number);
  // Everything the child wrote so far.
  [[nodiscard]] std::string log() const;
  // Exit code once the child has been reaped, -1 before.
  [[nodiscard]] int exit_code() const { return exit_code_; }

 private:
  void reap(int status);

  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::string log_path_;
};

}  // namespace seatflow::testing

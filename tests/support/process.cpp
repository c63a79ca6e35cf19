// Child processes for functional tests: fork/exec with environment overrides and bounded waits.
#include "support/process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/http_client.hpp"

extern char** environ;

namespace seatflow::testing {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(10);

// The environment for the child: the test's own, with the overrides replacing or adding names.
std::vector<std::string> child_environment(const EnvOverrides& env) {
  std::vector<std::string> out;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const auto name = text.substr(0, text.find('='));
    if (env.find(name) == env.end()) {
      out.push_back(text);
    }
  }
  for (const auto& [name, value] : env) {
    if (value) {
      out.push_back(name + "=" + *value);
    }
  }
  return out;
}

std::string make_log_path() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/seatflow-functional-XXXXXX";
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    ADD_FAILURE() << "mkstemp: " << std::strerror(errno);
    return {};
  }
  ::close(fd);
  return pattern;
}

// Forks and execs `binary args...` with `env`, output to `log_path`; the child's pid or -1.
pid_t spawn(const std::vector<std::string>& args, const EnvOverrides& env,
            const std::string& log_path) {
  const auto binary = seatflow_binary();
  if (binary.empty() || log_path.empty()) {
    return -1;
  }
  // Everything the child needs is built before fork: only async-signal-safe calls after it.
  std::vector<std::string> argv_storage;
  argv_storage.push_back(binary);
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_storage) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  auto env_storage = child_environment(env);
  std::vector<char*> envp;
  for (auto& entry : env_storage) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (log_fd < 0) {
    ADD_FAILURE() << "open " << log_path << ": " << std::strerror(errno);
    return -1;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
    }
    // The test may block signals (gtest does not, but be safe): the child starts with none blocked.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  ::close(log_fd);
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
  }
  return pid;
}

int decode_status(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  if (WIFSIGNALED(status)) {
    return 128 + WTERMSIG(status);
  }
  return -1;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

std::string seatflow_binary() {
  const char* binary = std::getenv("SEATFLOW_BINARY");
  if (binary == nullptr || *binary == '\0') {
    ADD_FAILURE() << "SEATFLOW_BINARY is not set (ctest sets it to the built seatflow)";
    return {};
  }
  return binary;
}

std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    ADD_FAILURE() << "socket: " << std::strerror(errno);
    return 0;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  } else {
    ADD_FAILURE() << "bind/getsockname: " << std::strerror(errno);
  }
  ::close(fd);
  return port;
}

ExitResult run_to_exit(const std::vector<std::string>& args, const EnvOverrides& env,
                       std::chrono::milliseconds timeout) {
  EngineProcess process(args, env);
  ExitResult result;
  if (!process.started()) {
    return result;
  }
  result.exit_code = process.wait_exit(timeout);
  if (result.exit_code < 0) {
    result.timed_out = true;
    result.exit_code = process.stop(std::chrono::seconds(2));
  }
  result.output = process.log();
  return result;
}

EngineProcess::EngineProcess(const std::vector<std::string>& args, const EnvOverrides& env)
    : log_path_(make_log_path()) {
  pid_ = spawn(args, env, log_path_);
}

EngineProcess::~EngineProcess() {
  if (running()) {
    stop();
  }
  if (!log_path_.empty()) {
    ::unlink(log_path_.c_str());
  }
}

void EngineProcess::reap(int status) {
  exit_code_ = decode_status(status);
  pid_ = -pid_;  // remembered for messages, never signalled again
}

bool EngineProcess::running() {
  if (pid_ <= 0) {
    return false;
  }
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    reap(status);
    return false;
  }
  return done == 0;
}

int EngineProcess::wait_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return -1;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return exit_code_;
}

void EngineProcess::signal(int signal_number) {
  if (pid_ > 0) {
    ::kill(pid_, signal_number);
  }
}

int EngineProcess::stop(std::chrono::milliseconds grace) {
  if (!running()) {
    return exit_code_;
  }
  ::kill(pid_, SIGTERM);
  if (const int code = wait_exit(grace); code >= 0) {
    return code;
  }
  ADD_FAILURE() << "seatflow pid " << pid_ << " ignored SIGTERM for " << grace.count()
                << " ms; killing it";
  ::kill(pid_, SIGKILL);
  return wait_exit(std::chrono::seconds(5));
}

bool EngineProcess::wait_healthy(std::uint16_t port, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) {
      return false;
    }
    HttpClient client(port, 500);
    if (client.connected() && client.get("/healthz").status == 200) {
      return true;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return false;
}

std::string EngineProcess::log() const {
  return log_path_.empty() ? "" : read_file(log_path_);
}

}  // namespace seatflow::testing

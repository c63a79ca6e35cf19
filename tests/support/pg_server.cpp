// initdb + pg_ctl of a private PostgreSQL 15, frozen and thawed by signals to its processes.
#include "support/pg_server.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <sstream>
#include <thread>

#include "support/process.hpp"

namespace seatflow::testing {
namespace {

constexpr const char* kPgBin = "/usr/lib/postgresql/15/bin/";
constexpr auto kToolTimeout = std::chrono::seconds(60);

}  // namespace

PgServer::PgServer() : port_(free_port()) {
  char pattern[] = "/tmp/seatflow-pg-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  EXPECT_NE(made, nullptr) << "mkdtemp failed";
  dir_ = made != nullptr ? made : "/tmp";
  if (::geteuid() == 0) {
    if (const passwd* pg = ::getpwnam("postgres")) {
      EXPECT_EQ(::chown(dir_.c_str(), pg->pw_uid, pg->pw_gid), 0);
    }
  }
  ::chmod(dir_.c_str(), 0700);
}

PgServer::~PgServer() {
  thaw();
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

bool PgServer::run_tool(const std::vector<std::string>& args) const {
  std::vector<std::string> argv;
  if (::geteuid() == 0) {
    argv = {"runuser", "-u", "postgres", "--"};
  }
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log = dir_ + "/tool.log";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    if (::chdir("/") != 0) {
      _exit(126);
    }
    std::vector<char*> raw;
    for (const auto& arg : argv) {
      raw.push_back(const_cast<char*>(arg.c_str()));
    }
    raw.push_back(nullptr);
    ::execvp(raw[0], raw.data());
    _exit(127);
  }
  if (pid < 0) {
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + kToolTimeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool PgServer::start(const std::vector<std::string>& settings) {
  const std::string data = dir_ + "/data";
  if (!run_tool({std::string(kPgBin) + "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E",
                 "UTF8", "--locale=C.UTF-8", "--no-sync"})) {
    ADD_FAILURE() << "initdb failed; see " << dir_ << "/tool.log";
    return false;
  }
  // wal_level=logical as the engine needs (its events are read from the WAL); the test's own
  // settings come later and win.
  std::string options = "-p " + std::to_string(port_) + " -k " + dir_ +
                        " -c listen_addresses=127.0.0.1 -c fsync=off -c wal_level=logical";
  for (const auto& setting : settings) {
    options += " -c " + setting;
  }
  if (!run_tool({std::string(kPgBin) + "pg_ctl", "-D", data, "-l", dir_ + "/server.log", "-w", "-t",
                 "60", "-o", options, "start"})) {
    ADD_FAILURE() << "pg_ctl start failed; see " << dir_ << "/server.log";
    return false;
  }
  started_ = true;
  try {
    pqxx::connection conn("postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/postgres");
    pqxx::nontransaction tx(conn);
    tx.exec("CREATE DATABASE seatflow");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "CREATE DATABASE failed: " << e.what();
    return false;
  }
  return true;
}

void PgServer::stop() {
  if (!started_) {
    return;
  }
  if (!run_tool({std::string(kPgBin) + "pg_ctl", "-D", dir_ + "/data", "-m", "immediate", "-w",
                 "-t", "30", "stop"})) {
    ADD_FAILURE() << "pg_ctl stop failed; see " << dir_ << "/tool.log";
  }
  started_ = false;
}

pid_t PgServer::postmaster_pid() const {
  std::ifstream file(dir_ + "/data/postmaster.pid");
  pid_t pid = -1;
  file >> pid;
  return pid;
}

std::vector<pid_t> PgServer::children(pid_t parent) const {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
    const auto close = line.rfind(')');
    if (close == std::string::npos) {
      continue;
    }
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    pid_t ppid = -1;
    rest >> state >> ppid;
    if (ppid == parent) {
      out.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return out;
}

void PgServer::freeze() {
  const pid_t postmaster = postmaster_pid();
  ASSERT_GT(postmaster, 0) << "no postmaster.pid";
  // The postmaster first, so it forks no new backend while its children are stopped.
  ASSERT_EQ(::kill(postmaster, SIGSTOP), 0);
  for (const pid_t child : children(postmaster)) {
    ::kill(child, SIGSTOP);
  }
  frozen_ = true;
}

void PgServer::thaw() {
  if (!frozen_) {
    return;
  }
  const pid_t postmaster = postmaster_pid();
  for (const pid_t child : children(postmaster)) {
    ::kill(child, SIGCONT);
  }
  ::kill(postmaster, SIGCONT);
  frozen_ = false;
}

void PgServer::set_read_only(bool read_only) {
  pqxx::connection conn("postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/postgres");
  pqxx::nontransaction tx(conn);
  tx.exec(std::string("ALTER SYSTEM SET default_transaction_read_only = ") +
          (read_only ? "on" : "off"));
  tx.exec("SELECT pg_reload_conf()");
}

std::string PgServer::dsn() const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/seatflow";
}

}  // namespace seatflow::testing

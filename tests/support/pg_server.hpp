// A PostgreSQL server of a test's own on a free loopback port, which the test may freeze
// (SIGSTOP of the postmaster and its children: sockets stay open, nothing answers), thaw, or
// switch to read-only: for tests that take PostgreSQL away, which the shared server must never be.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace seatflow::testing {

class PgServer {
 public:
  PgServer();   // picks a port and a directory; not started yet
  ~PgServer();  // thaws, stops and removes it
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  // initdb, start (fsync off: throwaway data; wal_level=logical), CREATE DATABASE seatflow;
  // `settings` ("name=value") are passed to the server as -c options after those. False (after a
  // test failure naming the step) when a step failed or took longer than 60 s.
  [[nodiscard]] bool start(const std::vector<std::string>& settings = {});
  void stop();
  // SIGSTOP / SIGCONT to the postmaster and every process it forked.
  void freeze();
  void thaw();
  // ALTER SYSTEM SET default_transaction_read_only and pg_reload_conf().
  void set_read_only(bool read_only);
  [[nodiscard]] std::string dsn() const;  // the seatflow database
  [[nodiscard]] std::uint16_t port() const { return port_; }

 private:
  [[nodiscard]] pid_t postmaster_pid() const;
  [[nodiscard]] std::vector<pid_t> children(pid_t parent) const;
  // Runs a PostgreSQL tool (as user postgres when this process is root: initdb refuses root).
  [[nodiscard]] bool run_tool(const std::vector<std::string>& args) const;

  std::uint16_t port_ = 0;
  std::string dir_;
  bool started_ = false;
  bool frozen_ = false;
};

}  // namespace seatflow::testing

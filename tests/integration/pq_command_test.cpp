// A command on a raw libpq connection under a deadline (persistence/pq_command), as the event
// relay starts its replication stream: against the test PostgreSQL on a replication connection
// the results come back and the connection is ready for the next command; against a server that
// completed the startup handshake and then answers nothing (a server frozen just after it
// accepted) the call returns once the deadline passed, and a server that closes the connection
// mid-command is a failure, not a timeout.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <libpq-fe.h>

#include "persistence/drivers/pq_command.hpp"
#include "support/stores.hpp"

namespace seatflow::persistence {
namespace {
namespace SEATFLOW_UNITY_ID {

using Clock = std::chrono::steady_clock;

// The protocol's startup message codes a client may send before the real one.
constexpr std::uint32_t kSslRequest = 80877103;
constexpr std::uint32_t kGssEncRequest = 80877104;
// How long the fake server waits for its one client, and the call deadline the tests give.
constexpr int kAcceptWaitMs = 5'000;
constexpr auto kCallDeadline = std::chrono::milliseconds(300);

void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> static_cast<unsigned>(shift)) & 0xFFU));
  }
}

void put_message(std::string& out, char type, const std::string& body) {
  out.push_back(type);
  put_u32(out, static_cast<std::uint32_t>(body.size() + 4));
  out += body;
}

bool read_exact(int fd, char* buf, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const auto r = ::read(fd, buf + got, n - got);
    if (r <= 0) {
      return false;
    }
    got += static_cast<std::size_t>(r);
  }
  return true;
}

std::uint32_t get_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v = (v << 8U) | static_cast<unsigned char>(p[i]);
  }
  return v;
}

// A PostgreSQL server for one client on a loopback port: it completes the startup handshake
// (trust authentication, a PostgreSQL 15 read-write primary), then reads the client's commands and
// answers none of them, or closes the connection at the first one.
class HandshakeOnlyServer {
 public:
  enum class OnCommand { stay_silent, close };

  explicit HandshakeOnlyServer(OnCommand on_command) : on_command_(on_command) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_fd_, 1) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw std::runtime_error("handshake-only server: no loopback port");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~HandshakeOnlyServer() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  HandshakeOnlyServer(const HandshakeOnlyServer&) = delete;
  HandshakeOnlyServer& operator=(const HandshakeOnlyServer&) = delete;

  [[nodiscard]] std::string dsn() const {
    return "host=127.0.0.1 port=" + std::to_string(port_) +
           " user=seatflow dbname=seatflow connect_timeout=5 sslmode=disable gssencmode=disable";
  }
  // Bytes of commands the client sent after the handshake.
  [[nodiscard]] std::size_t command_bytes() const { return command_bytes_; }

 private:
  void serve() {
    pollfd lfd{listen_fd_, POLLIN, 0};
    if (::poll(&lfd, 1, kAcceptWaitMs) != 1) {
      return;
    }
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) {
      return;
    }
    if (handshake(fd)) {
      drain(fd);
    }
    ::close(fd);
  }

  static bool handshake(int fd) {
    for (;;) {
      char head[8];
      if (!read_exact(fd, head, sizeof head)) {
        return false;
      }
      const auto len = get_u32(head);
      const auto code = get_u32(head + 4);
      if (code == kSslRequest || code == kGssEncRequest) {
        if (::write(fd, "N", 1) != 1) {
          return false;
        }
        continue;
      }
      if (len < sizeof head) {
        return false;
      }
      std::vector<char> rest(len - sizeof head);
      if (!read_exact(fd, rest.data(), rest.size())) {
        return false;
      }
      break;
    }
    std::string out;
    std::string ok;
    put_u32(ok, 0);
    put_message(out, 'R', ok);
    for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
             {"server_version", "15.0"},
             {"server_encoding", "UTF8"},
             {"client_encoding", "UTF8"},
             {"standard_conforming_strings", "on"},
             {"integer_datetimes", "on"},
             {"in_hot_standby", "off"},
             {"default_transaction_read_only", "off"}}) {
      put_message(out, 'S', name + '\0' + value + '\0');
    }
    std::string key;
    put_u32(key, 4242);
    put_u32(key, 1);
    put_message(out, 'K', key);
    put_message(out, 'Z', "I");
    return ::write(fd, out.data(), out.size()) == static_cast<ssize_t>(out.size());
  }

  void drain(int fd) {
    while (!stop_) {
      pollfd pfd{fd, POLLIN, 0};
      if (::poll(&pfd, 1, 20) != 1) {
        continue;
      }
      char buf[512];
      const auto n = ::read(fd, buf, sizeof buf);
      if (n <= 0) {
        return;
      }
      command_bytes_ += static_cast<std::size_t>(n);
      if (on_command_ == OnCommand::close) {
        return;
      }
    }
  }

  OnCommand on_command_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> command_bytes_{0};
  std::thread thread_;
};

// A replication connection to `dsn` (a URI or key=value string), as the relay opens it.
PqConn connect_replication(const std::string& dsn) {
  const char* keys[] = {"dbname", "replication", nullptr};
  const char* values[] = {dsn.c_str(), "database", nullptr};
  PqConn conn(PQconnectdbParams(keys, values, 1));
  if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
    throw std::runtime_error("replication connect failed: " +
                             std::string(conn ? PQerrorMessage(conn.get()) : "out of memory"));
  }
  return conn;
}

// A command the test database answers well within its deadline.
Result<PqResult> answered(PGconn* conn, const char* command) {
  return pq_command(conn, command, Clock::now() + kCallDeadline * 10);
}

// The command was answered in time, with a result of `status`.
::testing::AssertionResult has_status(const Result<PqResult>& out, ExecStatusType status) {
  if (!out.ok()) {
    return ::testing::AssertionFailure() << out.error().message() << ": " << out.detail();
  }
  if (PQresultStatus(out.value().get()) != status) {
    return ::testing::AssertionFailure()
           << "status " << PQresStatus(PQresultStatus(out.value().get())) << ", expected "
           << PQresStatus(status);
  }
  return ::testing::AssertionSuccess();
}

TEST(PqCommand, ReplicationCommandsAnswerAndLeaveTheConnectionReadyForTheNext) {
  const auto conn = connect_replication(testing::test_pg_dsn());
  EXPECT_TRUE(has_status(answered(conn.get(), "SET wal_sender_timeout = 12345"), PGRES_COMMAND_OK));

  const auto identify = answered(conn.get(), "IDENTIFY_SYSTEM");
  ASSERT_TRUE(has_status(identify, PGRES_TUPLES_OK));
  EXPECT_EQ(PQntuples(identify.value().get()), 1);
  EXPECT_GE(PQnfields(identify.value().get()), 3);

  // The SET of the first command holds on the session: the connection was left between commands.
  const auto show = answered(conn.get(), "SHOW wal_sender_timeout");
  ASSERT_TRUE(has_status(show, PGRES_TUPLES_OK));
  EXPECT_STREQ(PQgetvalue(show.value().get(), 0, 0), "12345ms");
}

TEST(PqCommand, AnErrorIsAResultAndTheConnectionStaysUsable) {
  const auto conn = connect_replication(testing::test_pg_dsn());
  EXPECT_TRUE(
      has_status(answered(conn.get(), "START_REPLICATION SLOT seatflow_no_such_slot LOGICAL 0/0"),
                 PGRES_FATAL_ERROR));
  EXPECT_TRUE(has_status(answered(conn.get(), "IDENTIFY_SYSTEM"), PGRES_TUPLES_OK));
}

TEST(PqCommand, AServerThatAnswersNothingAfterTheHandshakeEndsTheCallAtItsDeadline) {
  HandshakeOnlyServer server(HandshakeOnlyServer::OnCommand::stay_silent);
  const auto conn = connect_replication(server.dsn());
  const auto identify = pq_command(conn.get(), "IDENTIFY_SYSTEM", Clock::now() + kCallDeadline);
  EXPECT_EQ(identify.error(), errc::deadline_exceeded);
  // The command went out: the wait was for the answer, not for the send.
  EXPECT_GT(server.command_bytes(), 0U);
}

TEST(PqCommand, AServerThatClosesMidCommandIsAFailureNotATimeout) {
  HandshakeOnlyServer server(HandshakeOnlyServer::OnCommand::close);
  const auto conn = connect_replication(server.dsn());
  const auto identify =
      pq_command(conn.get(), "IDENTIFY_SYSTEM", Clock::now() + std::chrono::seconds(30));
  EXPECT_EQ(identify.error(), errc::pg_unavailable);
  EXPECT_NE(PQstatus(conn.get()), CONNECTION_OK);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::persistence

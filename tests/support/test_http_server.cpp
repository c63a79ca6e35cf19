// The test server: a synchronous Beast accept loop (plain or TLS) answering through the handler.
#include "support/test_http_server.hpp"

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "support/test_keys.hpp"

namespace seatflow::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

template <class Stream>
void serve_one(Stream& stream, const ServerHandler& handler) {
  beast::flat_buffer buffer;
  bhttp::request<bhttp::string_body> req;
  beast::error_code ec;
  bhttp::read(stream, buffer, req, ec);
  if (ec) {
    return;
  }
  ServerRequest in;
  in.method = std::string(req.method_string());
  in.target = std::string(req.target());
  for (const auto& field : req) {
    in.headers.emplace_back(lower(std::string(field.name_string())), std::string(field.value()));
  }
  in.body = req.body();
  const auto out = handler(in);
  if (out.delay_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(out.delay_ms));
  }
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(out.status), 11};
  bool chunked = false;
  for (const auto& [name, value] : out.headers) {
    if (lower(name) == "transfer-encoding" && value == "chunked") {
      chunked = true;
      continue;
    }
    res.set(name, value);
  }
  res.body() = out.body;
  if (chunked) {
    res.chunked(true);
  } else {
    res.prepare_payload();
  }
  bhttp::write(stream, res, ec);
}

}  // namespace

std::string ServerRequest::header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) {
      return value;
    }
  }
  return {};
}

const TestCa& make_test_ca() {
  static std::once_flag once;
  static TestCa ca;
  std::call_once(once, [] {
    const auto dir = std::filesystem::path(write_temp_file("ca-dir-marker", "")).parent_path();
    const auto path = [&](const char* name) { return (dir / name).string(); };
    const std::string script =
        "set -e; cd '" + dir.string() + "'; " +
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 "
        "-subj /CN=SeatFlow-Test-CA 2>/dev/null; "
        "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
        "-subj /CN=127.0.0.1 2>/dev/null; "
        "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext; "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out server.pem -days 1 -extfile san.ext 2>/dev/null";
    const int rc = std::system(("bash -c \"" + script + "\"").c_str());
    EXPECT_EQ(rc, 0) << "openssl could not make the test CA";
    ca = {path("ca.pem"), path("server.pem"), path("server.key")};
  });
  return ca;
}

struct TestHttpServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::ssl::context tls{asio::ssl::context::tls_server};
};

TestHttpServer::TestHttpServer(ServerHandler handler, bool tls)
    : impl_(std::make_unique<Impl>()), handler_(std::move(handler)), tls_(tls) {
  if (tls_) {
    const auto& ca = make_test_ca();
    impl_->tls.use_certificate_chain_file(ca.server_cert_path);
    impl_->tls.use_private_key_file(ca.server_key_path, asio::ssl::context::pem);
  }
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  thread_ = std::thread([this] {
    while (!stopping_.load()) {
      beast::error_code ec;
      tcp::socket socket(impl_->io);
      impl_->acceptor.accept(socket, ec);
      if (ec || stopping_.load()) {
        return;
      }
      ++requests_;
      if (tls_) {
        beast::ssl_stream<tcp::socket> stream(std::move(socket), impl_->tls);
        stream.handshake(asio::ssl::stream_base::server, ec);
        if (!ec) {
          serve_one(stream, handler_);
          stream.shutdown(ec);
        }
      } else {
        serve_one(socket, handler_);
        socket.shutdown(tcp::socket::shutdown_both, ec);
      }
    }
  });
}

TestHttpServer::~TestHttpServer() {
  stopping_.store(true);
  // Wake the blocking accept with a connection of our own.
  try {
    asio::io_context io;
    tcp::socket poke(io);
    beast::error_code ec;
    poke.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
  } catch (...) {
  }
  if (thread_.joinable()) {
    thread_.join();
  }
}

std::string TestHttpServer::base_url() const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

}  // namespace seatflow::testing

// The Boost.Beast HTTP/1.1 server: keep-alive, in-order pipelining, every limit enforced.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "http/config.hpp"
#include "http/probe.hpp"
#include "http/types.hpp"

namespace seatflow::http {

class HttpServer {
 public:
  HttpServer(HttpConfig config, RequestHandler& handler, HttpProbe& probe);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the io threads; returns an error line when the address cannot be bound.
  [[nodiscard]] std::string start();
  // Stops accepting new connections; open ones finish their current request, and a request that
  // arrives later is answered 503 (Retry-After) and its connection closed.
  void stop_accepting();
  // Stops the io threads and joins them.
  void stop();
  [[nodiscard]] std::uint16_t port() const;
  [[nodiscard]] std::size_t open_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seatflow::http

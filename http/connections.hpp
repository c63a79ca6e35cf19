// The server's connection table by source (http/server.cpp): how many connections each TCP peer
// holds, for SEATFLOW_CONNECTIONS_PER_SOURCE_MAX, and a peer's address as a SourceAddress.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "http/source.hpp"

namespace seatflow::http {

// Open connections by source (the TCP peer), for SEATFLOW_CONNECTIONS_PER_SOURCE_MAX. Taken at
// accept and given back when a session ends, on any io thread: one lock each, not per request.
class SourceConnections {
 public:
  // False, counting nothing, when `source` already holds `max` connections.
  bool try_add(const SourceAddress& source, std::size_t max) {
    const std::lock_guard lock(mutex_);
    auto& open = open_[source];
    if (open >= max) {
      if (open == 0) {
        open_.erase(source);
      }
      return false;
    }
    ++open;
    return true;
  }
  void remove(const SourceAddress& source) {
    const std::lock_guard lock(mutex_);
    const auto found = open_.find(source);
    if (found != open_.end() && --found->second == 0) {
      open_.erase(found);
    }
  }

 private:
  std::mutex mutex_;
  std::unordered_map<SourceAddress, std::size_t, SourceAddressHash> open_;
};

// The TCP peer's address (IPv4 as IPv4-mapped IPv6).
inline SourceAddress source_of(const boost::asio::ip::tcp::endpoint& peer) {
  const auto address = peer.address();
  if (address.is_v4()) {
    return ipv4_address(address.to_v4().to_uint());
  }
  SourceAddress source;
  const auto bytes = address.to_v6().to_bytes();
  std::copy(bytes.begin(), bytes.end(), source.bytes.begin());
  return source;
}

}  // namespace seatflow::http

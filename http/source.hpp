// Where a request comes from (SPEC §14): addresses as 16 bytes (IPv4 as IPv4-mapped IPv6), CIDR
// ranges, and the source of a request: its TCP peer, or, when the peer is a trusted proxy, the
// right-most X-Forwarded-For address that is not one. Pure code, unit-tested without I/O.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/errc.hpp"

namespace seatflow::http {

struct SourceAddress {
  std::array<std::uint8_t, 16> bytes{};  // IPv6 network order; IPv4 as ::ffff:a.b.c.d

  friend bool operator==(const SourceAddress&, const SourceAddress&) = default;
};

struct SourceAddressHash {
  std::size_t operator()(const SourceAddress& address) const noexcept;
};

// "192.0.2.1" or "2001:db8::1" (an IPv6 address may be written in brackets); nullopt otherwise.
[[nodiscard]] std::optional<SourceAddress> parse_address(std::string_view text);
// The address as text: dotted quad for IPv4, RFC 5952 form for IPv6.
[[nodiscard]] std::string to_string(const SourceAddress& address);
[[nodiscard]] SourceAddress ipv4_address(std::uint32_t host_order);

// An address range: "10.0.0.0/8", "2001:db8::/32", or one address (a full-length prefix).
struct Cidr {
  SourceAddress base;   // with the bits past the prefix cleared
  unsigned prefix = 0;  // in bits of the 16-byte form (an IPv4 /8 is 96 + 8)

  [[nodiscard]] bool contains(const SourceAddress& address) const;
};

[[nodiscard]] std::optional<Cidr> parse_cidr(std::string_view text);
// A comma-separated list of CIDRs; errc::bad_request naming the entry that does not parse.
[[nodiscard]] Result<std::vector<Cidr>> parse_cidr_list(std::string_view text);
[[nodiscard]] bool contains_any(const std::vector<Cidr>& ranges, const SourceAddress& address);

// The longest X-Forwarded-For chain read: entries left of these (which only the client wrote) are
// never looked at.
inline constexpr std::size_t kForwardedHopsMax = 32;

// The request's source: `peer` unless it is in `trusted_proxies`; then the right-most
// X-Forwarded-For entry that is not a trusted proxy (entries are walked right to left; an entry
// that does not parse ends the walk at the last trusted hop, which is then the source).
[[nodiscard]] SourceAddress resolve_source(const SourceAddress& peer,
                                           std::string_view forwarded_for,
                                           const std::vector<Cidr>& trusted_proxies);

}  // namespace seatflow::http

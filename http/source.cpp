// Addresses, CIDR ranges and X-Forwarded-For resolution (see source.hpp).
#include "http/source.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace seatflow::http {
namespace {

constexpr unsigned kAddressBits = 128;
constexpr unsigned kMappedPrefixBits = 96;  // ::ffff:0:0/96 holds the IPv4 addresses
constexpr std::array<std::uint8_t, 12> kMappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool is_ipv4(const SourceAddress& address) {
  return std::equal(kMappedPrefix.begin(), kMappedPrefix.end(), address.bytes.begin());
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

std::size_t SourceAddressHash::operator()(const SourceAddress& address) const noexcept {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  std::memcpy(&high, address.bytes.data(), sizeof high);
  std::memcpy(&low, address.bytes.data() + sizeof high, sizeof low);
  // A multiply-xorshift mix: the low half alone is an IPv4 address in its top bits.
  std::uint64_t mixed = (high * 0x9e3779b97f4a7c15ULL) ^ low;
  mixed ^= mixed >> 33;
  mixed *= 0xff51afd7ed558ccdULL;
  mixed ^= mixed >> 33;
  return static_cast<std::size_t>(mixed);
}

SourceAddress ipv4_address(std::uint32_t host_order) {
  SourceAddress address;
  std::copy(kMappedPrefix.begin(), kMappedPrefix.end(), address.bytes.begin());
  const std::uint32_t network = htonl(host_order);
  std::memcpy(address.bytes.data() + kMappedPrefix.size(), &network, sizeof network);
  return address;
}

std::optional<SourceAddress> parse_address(std::string_view text) {
  text = trim(text);
  if (text.size() > 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  constexpr std::size_t kTextMax = 64;
  if (text.empty() || text.size() >= kTextMax) {
    return std::nullopt;
  }
  char zero_terminated[kTextMax] = {};
  std::memcpy(zero_terminated, text.data(), text.size());
  SourceAddress address;
  in_addr v4{};
  if (inet_pton(AF_INET, zero_terminated, &v4) == 1) {
    return ipv4_address(ntohl(v4.s_addr));
  }
  if (inet_pton(AF_INET6, zero_terminated, address.bytes.data()) == 1) {
    return address;
  }
  return std::nullopt;
}

std::string to_string(const SourceAddress& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (is_ipv4(address)) {
    inet_ntop(AF_INET, address.bytes.data() + kMappedPrefix.size(), text, sizeof text);
  } else {
    inet_ntop(AF_INET6, address.bytes.data(), text, sizeof text);
  }
  return text;
}

bool Cidr::contains(const SourceAddress& address) const {
  const unsigned whole = prefix / 8;
  if (!std::equal(base.bytes.begin(), base.bytes.begin() + whole, address.bytes.begin())) {
    return false;
  }
  const unsigned rest = prefix % 8;
  if (rest == 0) {
    return true;
  }
  const auto mask = static_cast<std::uint8_t>(0xff << (8 - rest));
  return (address.bytes[whole] & mask) == base.bytes[whole];
}

std::optional<Cidr> parse_cidr(std::string_view text) {
  text = trim(text);
  const auto slash = text.find('/');
  const auto address = parse_address(text.substr(0, slash));
  if (!address) {
    return std::nullopt;
  }
  Cidr cidr{*address, kAddressBits};
  const unsigned offset = is_ipv4(*address) ? kMappedPrefixBits : 0;
  if (slash != std::string_view::npos) {
    const auto bits = text.substr(slash + 1);
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), value);
    if (ec != std::errc{} || end != bits.data() + bits.size() || bits.empty() ||
        value > kAddressBits - offset) {
      return std::nullopt;
    }
    cidr.prefix = offset + value;
  }
  for (unsigned bit = cidr.prefix; bit < kAddressBits; ++bit) {
    cidr.base.bytes[bit / 8] &= static_cast<std::uint8_t>(~(0x80U >> (bit % 8)));
  }
  return cidr;
}

Result<std::vector<Cidr>> parse_cidr_list(std::string_view text) {
  std::vector<Cidr> ranges;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto entry = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (entry.empty()) {
      continue;
    }
    const auto cidr = parse_cidr(entry);
    if (!cidr) {
      return Result<std::vector<Cidr>>::failure(
          make_error_code(errc::bad_request),
          "'" + std::string(entry) + "' is not an address or CIDR range");
    }
    ranges.push_back(*cidr);
  }
  return ranges;
}

bool contains_any(const std::vector<Cidr>& ranges, const SourceAddress& address) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [&](const Cidr& range) { return range.contains(address); });
}

SourceAddress resolve_source(const SourceAddress& peer, std::string_view forwarded_for,
                             const std::vector<Cidr>& trusted_proxies) {
  SourceAddress source = peer;
  for (std::size_t hop = 0; hop < kForwardedHopsMax && contains_any(trusted_proxies, source);
       ++hop) {
    if (forwarded_for.empty()) {
      break;
    }
    const auto comma = forwarded_for.rfind(',');
    const auto entry =
        comma == std::string_view::npos ? forwarded_for : forwarded_for.substr(comma + 1);
    forwarded_for =
        comma == std::string_view::npos ? std::string_view{} : forwarded_for.substr(0, comma);
    const auto address = parse_address(entry);
    if (!address) {
      break;  // the chain's trusted part ends here: the last trusted hop answers for it
    }
    source = *address;
  }
  return source;
}

}  // namespace seatflow::http

// Shared pieces of the libFuzzer targets: a throwaway RSA key made in memory, invariant checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "channels/channel.hpp"
#include "codec/crypto.hpp"

namespace seatflow::fuzz {

// The fuzzer's clock: a fixed instant, so runs are reproducible.
inline constexpr std::int64_t kNowMs = 1'700'000'000'000;

// An RSA-2048 key generated once per process in memory (never written anywhere).
[[nodiscard]] const codec::SharedKey& throwaway_key();

// Aborts (a crash libFuzzer reports with the input) when `condition` is false.
void require(bool condition, const char* what);

// What every callback a channel lets through must satisfy, whatever the input.
void check_verified(const domain::VerifiedCallback& callback);

// Checks a verify() result: a rejection has a short detail; a callback passes check_verified.
void check_result(const channels::Result<domain::VerifiedCallback>& result);

// Splits "Name: value\n...\n\nbody" into lower-cased headers and the body (all of the input is
// the body when there is no blank line).
[[nodiscard]] std::string_view split_headers(std::string_view input, codec::Headers& headers);

// Splits `input` as split_headers does and verifies it with `channel`: the result must pass
// check_result and be a rejection (nothing verifies without the channel's key). Returns the body.
[[nodiscard]] std::string_view verify_unsigned(const channels::Channel& channel,
                                               std::string_view input, codec::Headers& headers);

// Checks the result of a request the harness signed with the channel's own key: check_result, and
// no signature or freshness rejection.
void check_self_signed(const channels::Result<domain::VerifiedCallback>& result);

[[nodiscard]] inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace seatflow::fuzz

// Digests used across channels: SHA-256 hex and the business-content digest of a callback.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "domain/types.hpp"

namespace seatflow::codec {

[[nodiscard]] std::string sha256_hex(std::string_view data);
[[nodiscard]] std::string to_lower_hex(std::string_view bytes);
// The bytes that `hex` (an even number of [0-9a-fA-F]) spells; nullopt for anything else.
[[nodiscard]] std::optional<std::string> hex_decode(std::string_view hex);

// SHA-256 over the callback's business content: payment, kind, amount, channel trade number.
// Timestamp and signature are excluded: a gateway's retry may renew them. The hashed text is
// "seatflow-business-v1;" followed by four "<name>=<byte length>:<value>;" fields in the order
// payment_no, kind ("success" / "failure" / "other"), amount (decimal minor units, "-" when
// absent), channel_trade_no. The length prefix makes the encoding unambiguous whatever bytes a
// value holds. Changing this format changes every stored payload_sha256: bump the version tag if it
// ever must.
[[nodiscard]] std::string business_digest(const domain::VerifiedCallback& callback);

}  // namespace seatflow::codec

// Digests used across channels: SHA-256 hex and the business-content digest of a callback.
#pragma once

#include <string>
#include <string_view>

#include "domain/types.hpp"

namespace seatflow::channels {

[[nodiscard]] std::string sha256_hex(std::string_view data);
[[nodiscard]] std::string to_lower_hex(std::string_view bytes);

// SHA-256 over the callback's business content: payment, kind, amount, channel trade number.
// Timestamp and signature are excluded: a gateway's retry may renew them.
[[nodiscard]] std::string business_digest(const domain::VerifiedCallback& callback);

}  // namespace seatflow::channels

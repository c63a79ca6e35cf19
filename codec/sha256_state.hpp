// A SHA-256 whose running state is plain bytes, so that one hash can span several calls of a pure
// function: a Stripe bill's pages, one answer per step (channels/stripe/stripe_bill.cpp keeps the
// state in the BillCursor between its steps).
#pragma once

#include <string>
#include <string_view>

namespace seatflow::codec {

// The state of a SHA-256 over nothing yet. The bytes mean something to this process only (they
// are OpenSSL's context as it is laid out here): never store or send them.
[[nodiscard]] std::string sha256_begin();
// `state` advanced over `data`. Throws std::invalid_argument for bytes sha256_begin did not make.
void sha256_update(std::string& state, std::string_view data);
// The lowercase hex digest of everything given to `state`. Throws as sha256_update does.
[[nodiscard]] std::string sha256_finish(const std::string& state);

}  // namespace seatflow::codec

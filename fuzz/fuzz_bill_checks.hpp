// What fuzz_bill holds every bill dialect and reader to (SPEC §13), whatever the bytes: the rows a
// sink is given, the failures, and the limits the fuzz input picks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "channels/bill.hpp"

namespace seatflow::fuzz {

// Which promises a dialect makes about the ids of its rows.
enum class BillIds : std::uint8_t {
  gateway_and_ours,  // wechat, alipay: trade and payment numbers always, a refund number on refunds
  trade_only,        // stripe: the trade always, our payment number when the metadata has it
};

// The first two bytes of the input: the mode, two flags, where the sink refuses, the limits and
// how the bytes are cut into chunks; the payload is the rest.
struct BillInput {
  int mode = 0;
  bool flag_a = false;
  bool flag_b = false;
  std::optional<std::size_t> fail_at;  // the sink refuses its n-th row (0-based)
  channels::BillLimits limits;
  std::size_t chunk_bytes = 1;  // how a harness-fed stream is cut
  std::string_view payload;
};

// Reads the header bytes; nullopt for an input shorter than them.
[[nodiscard]] std::optional<BillInput> read_bill_input(std::string_view input);

// A sink that checks every row against the dialect's promises and counts them; refuses the
// fail_at-th with a failure of its own (kSinkRefusal).
class CheckingSink final : public channels::BillRowSink {
 public:
  CheckingSink(BillIds ids, const BillInput& input) : ids_(ids), input_(input) {}

  [[nodiscard]] channels::Result<void> row(const channels::BillRow& row) override;
  [[nodiscard]] std::size_t offered() const { return offered_; }
  [[nodiscard]] std::size_t taken() const { return taken_; }

 private:
  BillIds ids_;
  const BillInput& input_;
  std::size_t offered_ = 0;
  std::size_t taken_ = 0;
};

inline constexpr std::string_view kSinkRefusal = "the fuzz sink refused a row";

// A failure of a bill step or reader: errc::rejected_answer, detail non-empty, short, valid UTF-8
// without control bytes (log-safe).
void check_bill_failure(const channels::Failure& failure);

// A Result<T> of a bill step or reader: check_bill_failure on a failure.
template <typename T>
void check_bill_result(const channels::Result<T>& result) {
  if (!result.ok()) {
    check_bill_failure(result.failure());
  }
}

// A bill that came out whole: its row count is what the sink took, its hash 64 hex digits.
void check_bill_summary(const channels::BillSummary& summary, const CheckingSink& sink);

// Lowercase hex SHA-1 / SHA-256 of `bytes` in one piece.
[[nodiscard]] std::string sha1_hex(std::string_view bytes);
[[nodiscard]] std::string sha256_hex(std::string_view bytes);

// A URL the harness names (aborts when it does not parse).
[[nodiscard]] net::Url url_of(std::string_view text);

// The bill day of every run, which the Stripe pages must fall in: the UTC day of kNowMs, balance
// transactions created in [1699920000, 1700006400).
inline const channels::BillDay kBillDay{"2023-11-14", 1'699'920'000'000, 1'700'006'400'000};

// (6) The WeChat Pay and Alipay dialects' second answer, the bill download, behind a first answer
// the harness signs with the throwaway key (fuzz_bill_download.cpp).
void fuzz_wechat_download(const BillInput& input);
void fuzz_alipay_download(const BillInput& input);

}  // namespace seatflow::fuzz

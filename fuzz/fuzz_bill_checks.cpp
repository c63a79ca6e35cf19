// What fuzz_bill holds the bill dialects and readers to (see fuzz_bill_checks.hpp).
#include "fuzz_bill_checks.hpp"

#include <array>

#include "codec/stream_digest.hpp"
#include "codec/text.hpp"
#include "fuzz_support.hpp"

namespace seatflow::fuzz {
namespace {

// A failure's detail is a log line's worth, never a body.
constexpr std::size_t kBillDetailBytesMax = 256;
// How a harness-fed stream is cut: byte by byte, odd pieces, mid-sized, or whole.
constexpr std::array<std::size_t, 4> kChunkBytes{1, 7, 256, 1 << 20};

bool is_hex(std::string_view text) {
  for (const char c : text) {
    if (codec::hex_digit_value(c) < 0 || (c >= 'A' && c <= 'F')) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<BillInput> read_bill_input(std::string_view input) {
  if (input.size() < 2) {
    return std::nullopt;
  }
  const auto first = static_cast<unsigned char>(input[0]);
  const auto second = static_cast<unsigned char>(input[1]);
  BillInput out;
  out.mode = first & 7U;
  out.flag_a = (first & 0x08U) != 0;
  out.flag_b = (first & 0x10U) != 0;
  if (const std::size_t fail = first >> 5U; fail < 7) {
    out.fail_at = fail;
  }
  out.limits.rows_max = std::size_t{1} << (second & 7U);             // 1 to 128 rows
  out.limits.bytes_max = std::size_t{256} << ((second >> 3U) & 7U);  // 256 B to 32 KiB
  out.chunk_bytes = kChunkBytes[second >> 6U];
  out.payload = input.substr(2);
  return out;
}

channels::Result<void> CheckingSink::row(const channels::BillRow& row) {
  ++offered_;
  require(offered_ <= input_.limits.rows_max, "a row given past rows_max");
  require(row.amount_cents > 0, "a row whose amount is not positive");
  require(codec::is_valid_id(row.trade_no), "a row whose trade number is not an id");
  if (ids_ == BillIds::gateway_and_ours) {
    require(codec::is_valid_id(row.payment_no), "a row whose payment number is not an id");
  } else {
    require(row.payment_no.empty() || codec::is_valid_id(row.payment_no),
            "a row whose payment number is neither empty nor an id");
  }
  if (row.kind == channels::BillRowKind::refund) {
    require(codec::is_valid_id(row.refund_no), "a refund row whose refund number is not an id");
  } else {
    require(row.refund_no.empty(), "a payment row with a refund number");
  }
  if (input_.fail_at && offered_ - 1 == *input_.fail_at) {
    return channels::rejected_answer(std::string(kSinkRefusal));
  }
  ++taken_;
  return {};
}

void check_bill_failure(const channels::Failure& failure) {
  require(channels::errc_of(failure.code) == channels::errc::rejected_answer,
          "a bill failure that is not rejected_answer");
  const std::string& detail = failure.detail;
  require(!detail.empty() && detail.size() <= kBillDetailBytesMax, "bill detail empty or long");
  require(codec::is_valid_utf8(detail), "bill detail is not UTF-8");
  for (const char c : detail) {
    require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F, "a control byte in a bill detail");
  }
}

void check_bill_summary(const channels::BillSummary& summary, const CheckingSink& sink) {
  require(summary.rows == sink.taken(), "a summary's row count is not what the sink took");
  require(summary.sha256.size() == 64 && is_hex(summary.sha256), "a summary's hash is not hex");
}

net::Url url_of(std::string_view text) {
  auto url = net::parse_url(text);
  require(url.ok(), "a harness URL does not parse");
  return std::move(url).value();
}

std::string sha1_hex(std::string_view bytes) {
  codec::StreamDigest digest(codec::StreamDigest::Algorithm::sha1);
  digest.update(bytes);
  return digest.hex();
}

std::string sha256_hex(std::string_view bytes) {
  codec::StreamDigest digest(codec::StreamDigest::Algorithm::sha256);
  digest.update(bytes);
  return digest.hex();
}

}  // namespace seatflow::fuzz

// The bill read line by line as it inflates, hashed on the way (see the header).
#include "channels/bill_lines.hpp"

#include <optional>
#include <utility>

#include "codec/bill_text.hpp"
#include "codec/stream_digest.hpp"

namespace seatflow::channels {
namespace {

// 10^-5 yuan per cent.
constexpr std::int64_t kFeeUnitsPerCent = 1000;

}  // namespace

Result<BillDigests> read_bill_lines(std::string_view what, const BillInflate& inflate,
                                    bool with_sha1, const BillLineHandler& on_line) {
  codec::StreamDigest sha256(codec::StreamDigest::Algorithm::sha256);
  std::optional<codec::StreamDigest> sha1;
  if (with_sha1) {
    sha1.emplace(codec::StreamDigest::Algorithm::sha1);
  }
  codec::LineSplitter lines;
  std::optional<Failure> failed;
  const codec::LineSink sink = [&](std::string_view line) {
    auto handled = on_line(line);
    if (!handled.ok()) {
      failed = std::move(handled).failure();
      return false;
    }
    return true;
  };
  const auto status = inflate([&](std::string_view chunk) {
    sha256.update(chunk);
    if (sha1) {
      sha1->update(chunk);
    }
    return lines.feed(chunk, sink);
  });
  if (failed) {
    return std::move(*failed);
  }
  if (lines.too_long()) {
    return rejected_answer(std::string(what) + ": a line longer than the bill line limit");
  }
  if (status == codec::InflateStatus::too_large) {
    return rejected_answer(std::string(what) + ": over SEATFLOW_BILL_BYTES_MAX uncompressed");
  }
  if (status != codec::InflateStatus::ok) {
    return rejected_answer(std::string(what) + ": " + std::string(codec::to_string(status)));
  }
  if (!lines.finish(sink)) {
    return std::move(*failed);
  }
  return BillDigests{sha1 ? sha1->hex() : std::string(), sha256.hex()};
}

Result<void> BillRowBudget::count() {
  if (read_ >= limits_.rows_max) {
    return rejected_answer("more rows than SEATFLOW_BILL_ROWS_MAX");
  }
  ++read_;
  return {};
}

Result<void> BillRowBudget::give(const BillRow& row) {
  auto taken = sink_.row(row);
  if (taken.ok()) {
    ++given_;
  }
  return taken;
}

Failure bill_row_rejected(std::size_t row_number, std::string_view why) {
  return rejected_answer("row " + std::to_string(row_number) + ": " + std::string(why));
}

// Divided before it is rounded, so that no fee near the int64 bounds overflows (a bill may write
// up to 92233720368547.75807 yuan).
std::int64_t fee_units_to_cents(std::int64_t units) {
  const std::int64_t cents = units / kFeeUnitsPerCent;  // toward zero
  const std::int64_t rest = units % kFeeUnitsPerCent;   // with the sign of units
  if (rest >= kFeeUnitsPerCent / 2) {
    return cents + 1;
  }
  if (rest <= -kFeeUnitsPerCent / 2) {
    return cents - 1;
  }
  return cents;
}

bool add_exact(std::int64_t& total, std::int64_t value) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(total, value, &sum)) {
    return false;
  }
  total = sum;
  return true;
}

bool is_bill_date(std::string_view date) {
  if (date.size() != 10 || date[4] != '-' || date[7] != '-') {
    return false;
  }
  for (std::size_t i = 0; i < date.size(); ++i) {
    if (i != 4 && i != 7 && (date[i] < '0' || date[i] > '9')) {
      return false;
    }
  }
  return true;
}

}  // namespace seatflow::channels

// hmac bill: the request, the signature check, the CSV read by header name, and the gateway's side
// (CSV and signature) for the dev mock gateway and the tests.
#include "channels/hmac/hmac_bill.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <stdexcept>

#include <openssl/evp.h>

#include "codec/crypto.hpp"
#include "codec/digest.hpp"
#include "codec/stream_digest.hpp"

namespace seatflow::channels {
namespace {

constexpr std::array<std::string_view, 5> kHmacBillColumns = {"tradeNo", "paymentNo", "type",
                                                              "amountCents", "completedAt"};

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's hmac_bill_days_from_civil).
std::int64_t hmac_bill_days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::optional<unsigned> hmac_bill_digits(std::string_view text) {
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() || text[0] == '+') {
    return std::nullopt;
  }
  return value;
}

std::optional<std::int64_t> hmac_bill_cents(std::string_view text) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() || value <= 0) {
    return std::nullopt;
  }
  return value;
}

bool hmac_bill_id_ok(std::string_view text) {
  if (text.empty() || text.size() > kHmacMaxIdBytes) {
    return false;
  }
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20U || byte >= 0x7FU || c == ',') {
      return false;
    }
  }
  return true;
}

// The fields of one line, split at commas (the bill quotes nothing).
std::vector<std::string_view> hmac_bill_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    fields.push_back(line.substr(start, comma - start));
    if (comma == std::string_view::npos) {
      return fields;
    }
    start = comma + 1;
  }
}

// Where each required column is; the detail of a header without one in `why`.
std::optional<std::array<std::size_t, kHmacBillColumns.size()>> hmac_bill_columns(
    std::string_view header, std::string& why) {
  const auto names = hmac_bill_fields(header);
  std::array<std::size_t, kHmacBillColumns.size()> places{};
  for (std::size_t c = 0; c < kHmacBillColumns.size(); ++c) {
    std::size_t found = names.size();
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == kHmacBillColumns[c]) {
        found = i;
      }
    }
    if (found == names.size()) {
      why = "the bill's header has no " + std::string(kHmacBillColumns[c]) + " column";
      return std::nullopt;
    }
    places[c] = found;
  }
  return places;
}

// One data line as a row; nullopt when a field does not parse.
std::optional<BillRow> hmac_bill_row(std::string_view line,
                                     const std::array<std::size_t, kHmacBillColumns.size()>& places,
                                     std::size_t width) {
  const auto fields = hmac_bill_fields(line);
  if (fields.size() != width) {
    return std::nullopt;
  }
  BillRow row;
  const auto type = fields[places[2]];
  if (type != "payment" && type != "refund") {
    return std::nullopt;
  }
  row.kind = type == "payment" ? BillRowKind::payment : BillRowKind::refund;
  row.trade_no = std::string(fields[places[0]]);
  row.payment_no = std::string(fields[places[1]]);
  const auto amount = hmac_bill_cents(fields[places[3]]);
  const auto completed = parse_utc_ms(fields[places[4]]);
  if (!hmac_bill_id_ok(row.trade_no) || !hmac_bill_id_ok(row.payment_no) || !amount || !completed) {
    return std::nullopt;
  }
  row.amount_cents = *amount;
  row.completed_at_ms = *completed;
  return row;
}

}  // namespace

std::optional<std::int64_t> parse_utc_ms(std::string_view text) {
  if (text.size() < 20 || text.back() != 'Z' || text[4] != '-' || text[7] != '-' ||
      text[10] != 'T' || text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  const auto year = hmac_bill_digits(text.substr(0, 4));
  const auto month = hmac_bill_digits(text.substr(5, 2));
  const auto day = hmac_bill_digits(text.substr(8, 2));
  const auto hour = hmac_bill_digits(text.substr(11, 2));
  const auto minute = hmac_bill_digits(text.substr(14, 2));
  const auto second = hmac_bill_digits(text.substr(17, 2));
  if (!year || !month || !day || !hour || !minute || !second || *month < 1 || *month > 12 ||
      *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  unsigned millis = 0;
  if (text.size() > 20) {
    const auto fraction = text.substr(20, text.size() - 21);
    if (text[19] != '.' || fraction.empty() || fraction.size() > 9 || !hmac_bill_digits(fraction)) {
      return std::nullopt;
    }
    for (std::size_t i = 0; i < 3; ++i) {
      millis = millis * 10 + (i < fraction.size() ? static_cast<unsigned>(fraction[i] - '0') : 0);
    }
  } else if (text.size() != 20) {
    return std::nullopt;
  }
  const auto days = hmac_bill_days_from_civil(*year, *month, *day);
  return ((days * 24 + *hour) * 60 + *minute) * 60'000 + *second * 1000LL + millis;
}

std::string format_utc_ms(std::int64_t unix_ms) {
  const std::int64_t days =
      unix_ms >= 0 ? unix_ms / 86'400'000 : (unix_ms - 86'399'999) / 86'400'000;
  std::int64_t rest = unix_ms - days * 86'400'000;
  // civil_from_days (H. Hinnant).
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0);
  std::array<char, 40> out{};
  const auto ms = rest % 1000;
  rest /= 1000;
  const int n =
      std::snprintf(out.data(), out.size(), "%04lld-%02u-%02uT%02lld:%02lld:%02lld",
                    static_cast<long long>(y), m, d, static_cast<long long>(rest / 3600),
                    static_cast<long long>(rest / 60 % 60), static_cast<long long>(rest % 60));
  std::string text(out.data(), static_cast<std::size_t>(n));
  if (ms != 0) {
    std::array<char, 8> frac{};
    std::snprintf(frac.data(), frac.size(), ".%03lld", static_cast<long long>(ms));
    text += frac.data();
  }
  return text + "Z";
}

std::string hmac_bill_csv(const std::vector<HmacBillEntry>& entries) {
  std::string body(kHmacBillHeader);
  body += '\n';
  for (const auto& entry : entries) {
    body += entry.trade_no + ',' + entry.payment_no + ',' + std::string(to_string(entry.kind)) +
            ',' + std::to_string(entry.amount_cents) + ',' + format_utc_ms(entry.completed_at_ms) +
            '\n';
  }
  return body;
}

std::string hmac_bill_signature(std::string_view secret, std::string_view body) {
  const std::array<std::string_view, 1> pieces{body};
  return codec::to_lower_hex(codec::hmac_sha256(secret, pieces));
}

HmacBill::HmacBill(HmacConfig config, net::Url gateway)
    : config_(std::move(config)), gateway_(std::move(gateway)) {
  if (config_.secrets.empty()) {
    throw std::invalid_argument("the hmac bill needs a callback secret");
  }
  for (const auto& secret : config_.secrets) {
    if (secret.empty()) {
      throw std::invalid_argument("an hmac callback secret is empty");
    }
  }
  gateway_.target = net::base_path(std::move(gateway_.target));
}

net::Request HmacBill::bill_request(const BillDay& day, std::int64_t /*now_ms*/) const {
  net::Request request;
  request.method = "GET";
  request.url = gateway_;
  request.url.target = gateway_.target + std::string(kHmacBillPath) + day.date;
  request.headers = {{"Accept", "text/csv"}};
  return request;
}

namespace {

// The hmac bill's CSV as it streams: lines to the sink as they end, the MAC under every callback
// secret and the SHA-256 fed every piece. A line that does not parse (or one row too many) stops
// the rows but not the MACs: the signature still decides first, as it did when the body was
// whole. Only the current line is kept.
class HmacBillReader final : public BillBodyReader {
 public:
  HmacBillReader(const HmacConfig& config, const std::string* signature, const BillLimits& limits,
                 BillCursor& cursor, BillRowSink& sink)
      : limits_(limits), cursor_(cursor), sink_(sink) {
    if (signature != nullptr) {
      given_ = codec::hex_decode(*signature);
    }
    if (given_ && given_->size() == codec::kHmacSha256Bytes) {
      for (const auto& secret : config.secrets) {
        macs_.push_back(codec::keyed_hmac_sha256(secret));
      }
    }
  }

  Result<void> piece(std::string_view bytes) override {
    if (macs_.empty()) {
      return rejected_answer("the bill's signature does not verify");
    }
    bytes_ += bytes.size();
    if (bytes_ > limits_.bytes_max) {
      return rejected_answer("the bill is over SEATFLOW_BILL_BYTES_MAX");
    }
    for (const auto& mac : macs_) {
      if (EVP_MAC_update(mac.get(), codec::bytes_of(bytes), bytes.size()) != 1) {
        return rejected_answer("the bill's signature could not be computed");
      }
    }
    sha_.update(bytes);
    while (!bytes.empty()) {
      const auto end = bytes.find('\n');
      const auto part = bytes.substr(0, end);
      if (carry_.size() + part.size() > kHmacBillLineBytesMax) {
        fail_rows("line " + std::to_string(line_no_ + 1) + " of the bill does not parse");
        carry_.clear();
      } else if (!failed_rows_) {
        carry_.append(part);
      }
      if (end == std::string_view::npos) {
        break;
      }
      bytes.remove_prefix(end + 1);
      if (auto taken = line(); !taken.ok()) {
        return taken;
      }
    }
    return {};
  }

  Result<BillStep> finish() override {
    if (macs_.empty()) {
      return rejected_answer("the bill's signature does not verify");
    }
    if (!carry_.empty()) {
      if (auto taken = line(); !taken.ok()) {
        return std::move(taken).failure();
      }
    }
    bool any = false;
    for (const auto& mac : macs_) {
      std::string out(codec::kHmacSha256Bytes, '\0');
      std::size_t out_len = 0;
      const bool computed = EVP_MAC_final(mac.get(), reinterpret_cast<unsigned char*>(out.data()),
                                          &out_len, out.size()) == 1 &&
                            out_len == codec::kHmacSha256Bytes;
      any = (computed && codec::constant_time_equal(out, *given_)) || any;
    }
    if (!any) {
      return rejected_answer("the bill's signature does not verify");
    }
    if (failed_rows_) {
      return rejected_answer(why_);
    }
    if (!places_) {
      // An empty body: not even a header line.
      std::string why;
      (void)hmac_bill_columns({}, why);
      return rejected_answer(why);
    }
    cursor_.bytes += bytes_;
    return BillStep{BillStep::Kind::done, std::nullopt, {cursor_.rows, sha_.hex()}, {}};
  }

 private:
  // The line in carry_ is whole: the header, or a row to the sink.
  Result<void> line() {
    ++line_no_;
    std::string_view text = carry_;
    text = text.ends_with('\r') ? text.substr(0, text.size() - 1) : text;
    const auto clear = [this] { carry_.clear(); };
    if (failed_rows_) {
      clear();
      return {};
    }
    if (!places_) {
      std::string why;
      places_ = hmac_bill_columns(text, why);
      width_ = hmac_bill_fields(text).size();
      if (!places_) {
        fail_rows(why);
      }
      clear();
      return {};
    }
    if (text.empty()) {
      clear();
      return {};
    }
    if (cursor_.rows >= limits_.rows_max) {
      fail_rows("the bill has more rows than SEATFLOW_BILL_ROWS_MAX");
      clear();
      return {};
    }
    const auto row = hmac_bill_row(text, *places_, width_);
    clear();
    if (!row) {
      fail_rows("line " + std::to_string(line_no_) + " of the bill does not parse");
      return {};
    }
    if (auto taken = sink_.row(*row); !taken.ok()) {
      return taken;
    }
    ++cursor_.rows;
    return {};
  }

  void fail_rows(std::string why) {
    if (!failed_rows_) {
      failed_rows_ = true;
      why_ = std::move(why);
    }
  }

  const BillLimits& limits_;
  BillCursor& cursor_;
  BillRowSink& sink_;
  std::optional<std::string> given_;
  std::vector<codec::MacCtxPtr> macs_;
  codec::StreamDigest sha_{codec::StreamDigest::Algorithm::sha256};
  std::string carry_;  // the line being read
  std::size_t line_no_ = 0;
  std::size_t bytes_ = 0;
  std::optional<std::array<std::size_t, kHmacBillColumns.size()>> places_;
  std::size_t width_ = 0;
  bool failed_rows_ = false;
  std::string why_;
};

}  // namespace

std::unique_ptr<BillBodyReader> HmacBill::body_reader(const BillDay& /*day*/,
                                                      const BillLimits& limits, BillCursor& cursor,
                                                      const net::Response& head,
                                                      BillRowSink& sink) const {
  if (head.status != 200) {
    return nullptr;
  }
  return std::make_unique<HmacBillReader>(config_, head.header(kHmacBillSignatureHeader), limits,
                                          cursor, sink);
}

Result<BillStep> HmacBill::step(const BillDay& day, const BillLimits& limits, BillCursor& cursor,
                                const net::Response& response, BillRowSink& sink,
                                std::int64_t /*now_ms*/) const {
  ++cursor.step;
  if (response.status == 404) {
    return BillStep{BillStep::Kind::no_bill, std::nullopt, {0, codec::sha256_hex("")}, {}};
  }
  if (response.status == 409 || response.status == 425) {
    return BillStep{BillStep::Kind::not_ready, std::nullopt, {}, "the gateway is making the bill"};
  }
  if (response.status != 200) {
    return rejected_answer("unexpected HTTP status " + std::to_string(response.status));
  }
  // The whole body at hand (a test, or a reader not taken): read as if it had streamed.
  const auto reader = body_reader(day, limits, cursor, response, sink);
  if (auto read = reader->piece(response.body); !read.ok()) {
    return std::move(read).failure();
  }
  return reader->finish();
}

}  // namespace seatflow::channels

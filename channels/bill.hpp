// Bill sources (SPEC §13): each channel fetches its gateway's daily bill (对账单) in one or more
// requests, verifies every answer as §10 does, proves the bill whole (a hash, a total, a row count
// or a signature) and streams its rows, in minor units, into a sink. The dialect is pure (OpenSSL
// and zlib only, no I/O): the bill runner (actors/bill_runner.hpp) sends the requests and owns the
// sink, which loads the rows into PostgreSQL inside the run's transaction. A bill that is not
// whole fails the step after some rows may have reached the sink; the runner then rolls the whole
// load back, so nothing of it is applied or recorded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "channels/errc.hpp"
#include "domain/types.hpp"
#include "net/message.hpp"

namespace seatflow::channels {

enum class BillRowKind : std::uint8_t { payment, refund };

[[nodiscard]] std::string_view to_string(BillRowKind kind);

// One row of a gateway's bill, whatever its dialect.
struct BillRow {
  BillRowKind kind = BillRowKind::payment;
  // The gateway's trade number (微信支付订单号, 支付宝交易号, the PaymentIntent id, tradeNo).
  std::string trade_no;
  // SeatFlow's payment number (商户订单号, metadata.paymentNo, paymentNo); empty when the row
  // names only the trade (a Stripe refund): the runner then finds the payment by its trade number.
  std::string payment_no;
  // A refund row's refund number (the gateway's, or ours when the bill gives it); empty for
  // payments.
  std::string refund_no;
  std::int64_t amount_cents = 0;     // always positive: what was taken, or what was given back
  std::int64_t fee_cents = 0;        // the gateway's fee on this row (negative when it returns one)
  std::int64_t completed_at_ms = 0;  // when the gateway completed it (Unix ms); 0 when unknown
};

// Where the rows go. A failure (a row limit, a store error) ends the step with that failure.
class BillRowSink {
 public:
  virtual ~BillRowSink() = default;
  [[nodiscard]] virtual Result<void> row(const BillRow& row) = 0;
};

// The bill asked for: one channel's calendar day.
struct BillDay {
  std::string date;           // YYYY-MM-DD, the gateway's calendar day
  std::int64_t start_ms = 0;  // the day's first instant (Unix ms) in the channel's zone
  std::int64_t end_ms = 0;    // the next day's first instant
};

// The limits every dialect enforces while it parses (SPEC §13), from the runner's settings.
struct BillLimits {
  std::size_t bytes_max = 256u * 1024u * 1024u;  // SEATFLOW_BILL_BYTES_MAX, uncompressed
  std::size_t rows_max = 5'000'000;              // SEATFLOW_BILL_ROWS_MAX
};

// What a bill said about itself, once it is whole.
struct BillSummary {
  std::size_t rows = 0;  // rows given to the sink
  std::string sha256;    // lowercase hex SHA-256 of the bill as downloaded, uncompressed
                         // (Stripe: of its pages' bodies in order)
};

// What the answer to one request came to.
struct BillStep {
  enum class Kind : std::uint8_t {
    next,       // send `next` and hand its answer to step() (a download URL, the next page)
    done,       // the bill is whole: every row went to the sink; `summary` says what it held
    not_ready,  // the gateway has not made the bill yet (STATEMENT_CREATING, …): try later
    no_bill,    // the gateway has no bill for a day without trades: a whole, empty bill
  };
  Kind kind = Kind::done;
  std::optional<net::Request> next;
  BillSummary summary;
  std::string detail;  // log-safe: why not_ready
};

// One channel's bill dialect. Implementations are pure and safe from any thread; state that spans
// several requests (a page cursor, a running hash) travels in BillCursor.
struct BillCursor {
  int step = 0;           // how many answers step() has taken so far
  std::size_t rows = 0;   // rows given to the sink so far
  std::size_t bytes = 0;  // uncompressed bytes read so far
  std::string state;      // the dialect's own (e.g. the hash context's running value)
};

// Reads one answer's body as it arrives (the runner hands it the pieces), its rows to the sink as
// they parse; finish() then answers as step() would for the whole body. A failure from piece()
// ends the download (the bill cannot be whole, or the sink failed).
class BillBodyReader {
 public:
  virtual ~BillBodyReader() = default;
  [[nodiscard]] virtual Result<void> piece(std::string_view bytes) = 0;
  [[nodiscard]] virtual Result<BillStep> finish() = 0;
};

class BillDialect {
 public:
  virtual ~BillDialect() = default;
  [[nodiscard]] virtual domain::Channel channel() const = 0;
  // The time zone whose calendar day the gateway's bill covers when the gateway fixes it
  // (Stripe's is UTC's, SPEC §13); empty: the merchant's SEATFLOW_BILL_TIMEZONE.
  [[nodiscard]] virtual std::string_view bill_zone() const { return {}; }
  // The first request for the bill of `day`, signed as the gateway requires.
  [[nodiscard]] virtual net::Request bill_request(const BillDay& day,
                                                  std::int64_t now_ms) const = 0;
  // The answer to the last request sent (the first, or a `next`): verified, parsed, its rows given
  // to `sink`. A failure is errc::rejected_answer (unverified, malformed, not whole: a hash, a
  // total or a row count that does not agree, a row that does not parse, a limit passed), its
  // detail log-safe (never a body, a signature or a key).
  [[nodiscard]] virtual Result<BillStep> step(const BillDay& day, const BillLimits& limits,
                                              BillCursor& cursor, const net::Response& response,
                                              BillRowSink& sink, std::int64_t now_ms) const = 0;
  // A reader for the body of the answer whose status and headers are `head` (no body yet), when
  // this dialect reads that answer as it streams (hmac's bill, verified incrementally, so a body
  // up to SEATFLOW_BILL_BYTES_MAX is never held whole); nullptr: step() takes the whole answer.
  // `cursor` and `sink` outlive the reader.
  [[nodiscard]] virtual std::unique_ptr<BillBodyReader> body_reader(const BillDay& /*day*/,
                                                                    const BillLimits& /*limits*/,
                                                                    BillCursor& /*cursor*/,
                                                                    const net::Response& /*head*/,
                                                                    BillRowSink& /*sink*/) const {
    return nullptr;
  }
};

// The answer to a bill's download request (the last of WeChat Pay's and Alipay's two): refused
// unless HTTP 200, else its body read by `read` (the rows to the sink) and the step done with what
// the bill said about itself; `cursor.rows` takes its rows.
[[nodiscard]] Result<BillStep> download_step(
    const net::Response& response, BillCursor& cursor,
    const std::function<Result<BillSummary>(std::string_view body)>& read);

// Amounts in yuan as the bills write them ("12.34", "-0.01", "100", "¥1.50" is malformed) to
// minor units, exactly (no floating point); nullopt for anything else, more than two decimals
// included.
[[nodiscard]] std::optional<std::int64_t> yuan_to_cents(std::string_view text);

// The callback id a repaired bill row runs under: `bill:<channel>:<tradeNo>`.
[[nodiscard]] std::string bill_callback_id(domain::Channel channel, std::string_view trade_no);

}  // namespace seatflow::channels

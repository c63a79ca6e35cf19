// The `hmac` gateway's bill (SPEC §13): GET {base}/api/gateway/bills/YYYY-MM-DD answered 200
// text/csv `tradeNo,paymentNo,type,amountCents,completedAt` (type payment | refund, completedAt
// RFC 3339 UTC), header X-Bill-Signature = lowercase hex HMAC-SHA256 of the body under the first
// callback secret (verified under any); 404 = no trades that day; 409 or 425 = not ready yet.
// Both sides live here: SeatFlow's dialect and the gateway's CSV and signature (the dev mock
// gateway and the tests use them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "channels/bill.hpp"
#include "channels/hmac/hmac_channel.hpp"

namespace seatflow::channels {

// The longest line of a bill (a row's fields are ids of at most kHmacMaxIdBytes, a number and a
// time): a longer one does not parse, and no more of it is kept.
inline constexpr std::size_t kHmacBillLineBytesMax = 4096;

// The path of the bill endpoint under the gateway's base URL (the date follows).
inline constexpr std::string_view kHmacBillPath = "/api/gateway/bills/";
inline constexpr std::string_view kHmacBillHeader =
    "tradeNo,paymentNo,type,amountCents,completedAt";
inline constexpr std::string_view kHmacBillSignatureHeader = "x-bill-signature";

// One line of the bill as the gateway writes it.
struct HmacBillEntry {
  std::string trade_no;
  std::string payment_no;
  BillRowKind kind = BillRowKind::payment;
  std::int64_t amount_cents = 0;
  std::int64_t completed_at_ms = 0;
};

// The gateway's side: the CSV body (header, then one line per entry) and its signature.
[[nodiscard]] std::string hmac_bill_csv(const std::vector<HmacBillEntry>& entries);
[[nodiscard]] std::string hmac_bill_signature(std::string_view secret, std::string_view body);
// RFC 3339 UTC with seconds ("2026-12-05T02:03:04Z", fractional seconds allowed) to Unix ms and
// back (milliseconds written only when not zero); nullopt for anything else.
[[nodiscard]] std::optional<std::int64_t> parse_utc_ms(std::string_view text);
[[nodiscard]] std::string format_utc_ms(std::int64_t unix_ms);

class HmacBill final : public BillDialect {
 public:
  // `config.secrets` are the callback secrets; `gateway` the base URL (SEATFLOW_HMAC_GATEWAY_URL).
  // Throws std::invalid_argument without a secret.
  HmacBill(HmacConfig config, net::Url gateway);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::hmac; }
  [[nodiscard]] net::Request bill_request(const BillDay& day, std::int64_t now_ms) const override;
  [[nodiscard]] Result<BillStep> step(const BillDay& day, const BillLimits& limits,
                                      BillCursor& cursor, const net::Response& response,
                                      BillRowSink& sink, std::int64_t now_ms) const override;
  // A 200 answer's CSV is read as it streams: its lines parsed to the sink, its HMAC-SHA256 and
  // SHA-256 computed piece by piece; the signature is checked at the end (the rows already given
  // go with the load the runner then rolls back), a body without a well-formed signature ends at
  // its first piece.
  [[nodiscard]] std::unique_ptr<BillBodyReader> body_reader(const BillDay& day,
                                                            const BillLimits& limits,
                                                            BillCursor& cursor,
                                                            const net::Response& head,
                                                            BillRowSink& sink) const override;

 private:
  HmacConfig config_;
  net::Url gateway_;
};

}  // namespace seatflow::channels

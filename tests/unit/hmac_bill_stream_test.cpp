// The hmac bill read as it streams (SPEC §13): the body handed to the dialect's reader in pieces of
// any size gives the rows, the hash and the answer the whole body gives; a body without a
// well-formed signature ends at its first piece; a signature that does not verify fails at the
// end, whatever the rows were; a line longer than a line may be is not kept.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "channels/hmac/hmac_bill.hpp"
#include "support/bill_rows.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using Rows = testing::KeptRows;

const channels::HmacBill kBill({{"new-secret", "old-secret"}, 300'000},
                               net::Url{false, "gw", 80, "/base/"});

net::Response head(const std::string& signature) {
  net::Response response;
  response.status = 200;
  if (!signature.empty()) {
    response.headers.emplace_back("x-bill-signature", signature);
  }
  return response;
}

struct Streamed {
  domain::Result<channels::BillStep> step;
  std::vector<channels::BillRow> rows;
  bool stopped_early = false;
};

// The body in pieces of `piece` bytes through the reader.
Streamed stream(const std::string& body, const std::string& signature, std::size_t piece,
                channels::BillLimits limits = {}) {
  channels::BillCursor cursor;
  Rows sink;
  const auto reader =
      kBill.body_reader({"2026-11-20", 0, 0}, limits, cursor, head(signature), sink);
  EXPECT_NE(reader, nullptr);
  for (std::size_t at = 0; at < body.size(); at += piece) {
    if (auto read = reader->piece(std::string_view(body).substr(at, piece)); !read.ok()) {
      return {std::move(read).failure(), std::move(sink.rows), true};
    }
  }
  return {reader->finish(), std::move(sink.rows), false};
}

std::string bill_body(int rows) {
  std::string body = "tradeNo,paymentNo,type,amountCents,completedAt\r\n";
  for (int i = 0; i < rows; ++i) {
    body += "T" + std::to_string(i) + ",P" + std::to_string(i) + ",payment," +
            std::to_string(100 + i) + ",2026-11-20T02:03:04Z\r\n";
  }
  return body + "T-last,P-last,refund,7,2026-11-20T02:03:05.250Z";  // no newline at the end
}

TEST(HmacBillStream, AnyPieceSizeReadsWhatTheWholeBodyReads) {
  const auto body = bill_body(200);
  const auto signature = channels::hmac_bill_signature("old-secret", body);
  channels::BillCursor cursor;
  Rows whole_rows;
  net::Response whole = head(signature);
  whole.body = body;
  const auto whole_step = kBill.step({"2026-11-20", 0, 0}, {}, cursor, whole, whole_rows, 0);
  ASSERT_TRUE(whole_step.ok()) << whole_step.detail();
  ASSERT_EQ(whole_rows.rows.size(), 201u);
  for (const std::size_t piece : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{64},
                                  std::size_t{4096}, body.size()}) {
    SCOPED_TRACE(piece);
    const auto got = stream(body, signature, piece);
    ASSERT_TRUE(got.step.ok()) << got.step.detail();
    EXPECT_EQ(got.step.value().summary.rows, 201u);
    EXPECT_EQ(got.step.value().summary.sha256, whole_step.value().summary.sha256);
    ASSERT_EQ(got.rows.size(), whole_rows.rows.size());
    EXPECT_EQ(got.rows.back().kind, channels::BillRowKind::refund);
    EXPECT_EQ(got.rows.back().completed_at_ms, whole_rows.rows.back().completed_at_ms);
    EXPECT_EQ(got.rows[150].amount_cents, 250);
  }
}

TEST(HmacBillStream, ABodyWithoutAWellFormedSignatureEndsAtItsFirstPiece) {
  for (const auto* signature : {"", "not-hex", "abcd"}) {
    const auto got = stream(bill_body(10), signature, 16);
    ASSERT_FALSE(got.step.ok());
    EXPECT_TRUE(got.stopped_early);
    EXPECT_TRUE(got.rows.empty());
    EXPECT_NE(got.step.detail().find("signature"), std::string::npos) << got.step.detail();
  }
}

// The rows were handed on (the runner rolls its load back), the signature decides at the end,
// before a row that did not parse.
TEST(HmacBillStream, ASignatureThatDoesNotVerifyFailsAtTheEnd) {
  const auto body = bill_body(10) + "\nT-bad,P-bad,gift,1,2026-11-20T02:03:04Z\n";
  const auto forged = stream(body, std::string(64, '0'), 32);
  ASSERT_FALSE(forged.step.ok());
  EXPECT_FALSE(forged.stopped_early);
  EXPECT_EQ(forged.step.detail(), "the bill's signature does not verify");
  const auto signed_bad_row = stream(body, channels::hmac_bill_signature("new-secret", body), 32);
  ASSERT_FALSE(signed_bad_row.step.ok());
  EXPECT_EQ(signed_bad_row.step.detail(), "line 13 of the bill does not parse");
}

TEST(HmacBillStream, ALineLongerThanALineMayBeIsNotKept) {
  std::string body = "tradeNo,paymentNo,type,amountCents,completedAt\n";
  body += std::string(channels::kHmacBillLineBytesMax * 4, 'T') + ",P,payment,1,x\n";
  const auto got = stream(body, channels::hmac_bill_signature("new-secret", body), 1000);
  ASSERT_FALSE(got.step.ok());
  EXPECT_EQ(got.step.detail(), "line 2 of the bill does not parse");
  channels::BillLimits small;
  small.bytes_max = 100;
  const auto over =
      stream(bill_body(10), channels::hmac_bill_signature("new-secret", bill_body(10)), 64, small);
  ASSERT_FALSE(over.step.ok());
  EXPECT_TRUE(over.stopped_early);
  EXPECT_NE(over.step.detail().find("SEATFLOW_BILL_BYTES_MAX"), std::string::npos);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

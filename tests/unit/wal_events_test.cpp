// Unit tests for the outbox through the WAL: pgoutput rows decoded from hand-built bytes (the
// formats of PostgreSQL 15's "Logical Replication Message Formats"), event payloads turned into
// stream fields in the stream's order, LSN text, and the shape of the move-plus-event statement.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "persistence/stores/events.hpp"

namespace seatflow::persistence::events {
namespace {
namespace SEATFLOW_UNITY_ID {

void put_be(std::string& out, std::uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFU));
  }
}

std::string begin_row(std::uint64_t final_lsn) {
  std::string out = "B";
  put_be(out, final_lsn, 8);
  put_be(out, 0x0003049'7FF50'2051ULL, 8);  // commit timestamp
  put_be(out, 725, 4);                      // xid
  return out;
}

std::string commit_row(std::uint64_t commit_lsn, std::uint64_t end_lsn) {
  std::string out = "C";
  put_be(out, 0, 1);  // flags
  put_be(out, commit_lsn, 8);
  put_be(out, end_lsn, 8);
  put_be(out, 0x0003049'7FF50'2051ULL, 8);
  return out;
}

std::string message_row(std::uint64_t lsn, bool transactional, const std::string& prefix,
                        const std::string& content) {
  std::string out = "M";
  put_be(out, transactional ? 1 : 0, 1);
  put_be(out, lsn, 8);
  out += prefix;
  out.push_back('\0');
  put_be(out, content.size(), 4);
  out += content;
  return out;
}

TEST(WalEventsTest, DecodesBeginMessageAndCommitRows) {
  const auto begin = parse_pgoutput(begin_row(0x1921128));
  ASSERT_TRUE(begin);
  EXPECT_EQ(begin->kind, WalChange::Kind::begin);
  EXPECT_EQ(begin->lsn, 0x1921128U);

  const auto message = parse_pgoutput(message_row(0x1921360, true, "seatflow", R"({"a":1})"));
  ASSERT_TRUE(message);
  EXPECT_EQ(message->kind, WalChange::Kind::message);
  EXPECT_TRUE(message->transactional);
  EXPECT_EQ(message->lsn, 0x1921360U);
  EXPECT_EQ(message->prefix, "seatflow");
  EXPECT_EQ(message->content, R"({"a":1})");
  const auto plain = parse_pgoutput(message_row(7, false, "x", ""));
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->transactional);
  EXPECT_EQ(plain->content, "");

  // The commit's point to confirm is its end LSN, not the commit record's start.
  const auto commit = parse_pgoutput(commit_row(0x19213E0, 0x1921410));
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->kind, WalChange::Kind::commit);
  EXPECT_EQ(commit->lsn, 0x1921410U);
}

// The exact bytes PostgreSQL 15 gave for a commit and a message (hex from a peek).
TEST(WalEventsTest, DecodesRowsAsPostgresqlWroteThem) {
  const auto from_hex = [](const std::string& hex) {
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
      out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return out;
  };
  const auto message = parse_pgoutput(from_hex("4d01000000000192136073656174666c6f77000000000132"));
  ASSERT_TRUE(message);
  EXPECT_EQ(message->prefix, "seatflow");
  EXPECT_EQ(message->content, "2");
  EXPECT_EQ(message->lsn, 0x1921360U);
  const auto commit =
      parse_pgoutput(from_hex("430000000000019213e0000000000192141000030497ff50214d"));
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->lsn, 0x1921410U);
}

TEST(WalEventsTest, TruncatedOrOverlongRowsAreRefused) {
  const auto message = message_row(1, true, "seatflow", "{}");
  for (std::size_t cut = 0; cut < message.size(); ++cut) {
    EXPECT_FALSE(parse_pgoutput(message.substr(0, cut))) << cut;
  }
  EXPECT_FALSE(parse_pgoutput(message + "x"));
  const auto commit = commit_row(1, 2);
  EXPECT_FALSE(parse_pgoutput(commit.substr(0, commit.size() - 1)));
  EXPECT_FALSE(parse_pgoutput(commit + "x"));
  auto no_terminator = std::string("M") + std::string(9, '\0') + "seatflow";
  EXPECT_FALSE(parse_pgoutput(no_terminator));
  // A length beyond the row.
  auto long_length = std::string("M") + std::string(9, '\0') + "p" + std::string(1, '\0');
  put_be(long_length, 100, 4);
  long_length += "short";
  EXPECT_FALSE(parse_pgoutput(long_length));
  // Other message kinds are passed over, not refused.
  const auto other = parse_pgoutput("R whatever");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->kind, WalChange::Kind::other);
}

TEST(WalEventsTest, StreamFieldsKeepTheStreamOrderAndLeaveNullsOut) {
  const auto fields =
      stream_fields(R"({"event_id": "order.paid:O1", "type": "order.paid", "payment_no": "P1",)"
                    R"( "order_no": "O1", "amount_cents": 5000, "detail": null,)"
                    R"( "occurred_at": "2026-12-01T21:27:25.123456Z"})");
  ASSERT_TRUE(fields);
  const StreamFields expected = {
      {"event_id", "order.paid:O1"}, {"type", "order.paid"},
      {"payment_no", "P1"},          {"order_no", "O1"},
      {"amount_cents", "5000"},      {"occurred_at", "2026-12-01T21:27:25.123456Z"}};
  EXPECT_EQ(*fields, expected);
  EXPECT_FALSE(stream_fields("not json"));
  EXPECT_FALSE(stream_fields(R"({"type": "order.paid"})"));
  EXPECT_FALSE(stream_fields(R"(["event_id"])"));
}

// Values that are neither strings, integers nor null (SeatFlow's statements write none) reach the
// stream as their JSON text; a repeated name counts once, its last value winning.
TEST(WalEventsTest, StreamFieldsCarryOtherValuesAsJsonText) {
  const auto fields =
      stream_fields(R"({"event_id": "e1", "type": "t", "type": "t2", "amount_cents": 1.5,)"
                    R"( "detail": {"kind": [1, true]}, "payment_no": false, "extra": "ignored"})");
  ASSERT_TRUE(fields);
  const StreamFields expected = {{"event_id", "e1"},
                                 {"type", "t2"},
                                 {"payment_no", "false"},
                                 {"amount_cents", "1.5"},
                                 {"detail", R"({"kind":[1,true]})"}};
  EXPECT_EQ(*fields, expected);
  const auto escaped = stream_fields(R"({"event_id": "a\"b\u00e9", "order_no": "O\/1"})");
  ASSERT_TRUE(escaped);
  const StreamFields decoded = {{"event_id", "a\"b\xc3\xa9"}, {"order_no", "O/1"}};
  EXPECT_EQ(*escaped, decoded);
  EXPECT_FALSE(stream_fields(R"({"event_id": 7})"));
  EXPECT_FALSE(stream_fields(R"({"event_id": "e1"} trailing)"));
}

TEST(WalEventsTest, LsnTextRoundTrips) {
  EXPECT_EQ(format_lsn(0x1921410), "0/1921410");
  EXPECT_EQ(format_lsn((0x2AULL << 32U) | 0xFFU), "2A/FF");
  EXPECT_EQ(parse_lsn("0/19213E0"), 0x19213E0U);
  EXPECT_EQ(parse_lsn("2A/FF"), (0x2AULL << 32U) | 0xFFU);
  EXPECT_FALSE(parse_lsn("19213E0"));
  EXPECT_FALSE(parse_lsn("/1"));
  EXPECT_FALSE(parse_lsn("1/"));
  EXPECT_FALSE(parse_lsn("1/xyz"));
  EXPECT_FALSE(parse_lsn("100000000/0"));
}

// The statement's events leave in one message, aggregated over the moved rows (through the slot
// guard of migration 11), and its result is the moved rows (the CAS proof) joined to that one
// emission; no INSERT into a table remains.
TEST(WalEventsTest, TheMoveStatementEmitsOneTransactionalMessageForAllItsRows) {
  const auto sql = with_event("UPDATE t SET s = 1 RETURNING k AS event_key", kPaymentFailed, "k");
  EXPECT_EQ(sql.rfind("WITH moved AS (UPDATE t SET s = 1 RETURNING k AS event_key), emitted AS "
                      "(SELECT seatflow_emit_events(json_agg(e)::text) AS lsn "
                      "FROM (SELECT 'payment.failed:' || moved.event_key AS event_id, ",
                      0),
            0U)
      << sql;
  EXPECT_NE(sql.find("HAVING count(*) > 0) SELECT k FROM moved CROSS JOIN emitted"),
            std::string::npos)
      << sql;
  EXPECT_EQ(sql.find("INSERT"), std::string::npos);
}

// Several moves in one statement: each a CTE, their events in one message (the first move's
// rows, then the second's), and one row of counts as the result.
TEST(WalEventsTest, SeveralMovesEmitOneMessageAndCountTheirRows) {
  const auto sql = with_events({{"UPDATE a SET s = 1 RETURNING k AS event_key", kPaymentSucceeded},
                                {"UPDATE b SET s = 1 RETURNING k AS event_key", kOrderPaid}});
  EXPECT_EQ(sql.rfind("WITH moved_1 AS (UPDATE a SET s = 1 RETURNING k AS event_key), "
                      "moved_2 AS (UPDATE b SET s = 1 RETURNING k AS event_key), emitted AS ",
                      0),
            0U)
      << sql;
  const auto first = sql.find("'payment.succeeded:' || moved_1.event_key");
  const auto second = sql.find(" UNION ALL SELECT 'order.paid:' || moved_2.event_key");
  ASSERT_NE(first, std::string::npos) << sql;
  ASSERT_NE(second, std::string::npos) << sql;
  EXPECT_LT(first, second);
  EXPECT_EQ(sql.find("seatflow_emit_events"), sql.rfind("seatflow_emit_events"));
  EXPECT_NE(sql.find("seatflow_emit_events"), std::string::npos) << sql;
  EXPECT_NE(sql.find(" SELECT (SELECT count(*) FROM moved_1), (SELECT count(*) FROM moved_2) "
                     "FROM emitted"),
            std::string::npos)
      << sql;
}

// What PostgreSQL's json_agg writes for two rows (elements on their own lines), a single object
// (what schema 3's migration and earlier statements emitted), and the malformed cases.
TEST(WalEventsTest, MessageEventsReadsAnArrayOfEventsOrOneEvent) {
  const auto two = message_events(
      "[{\"event_id\":\"payment.succeeded:P1\",\"type\":\"payment.succeeded\","
      "\"payment_no\":\"P1\",\"order_no\":\"O1\",\"amount_cents\":5000,\"detail\":null,"
      "\"occurred_at\":\"2026-12-02T15:27:48.456024Z\"}, \n "
      "{\"event_id\":\"payment.succeeded:P2\",\"type\":\"payment.succeeded\","
      "\"payment_no\":\"P}2\",\"order_no\":\"O{2\\\"\",\"amount_cents\":7,\"detail\":\"]\","
      "\"occurred_at\":\"2026-12-02T15:27:48.456024Z\"}]");
  ASSERT_TRUE(two);
  ASSERT_EQ(two->size(), 2U);
  EXPECT_EQ((*two)[0].front(),
            (std::pair<std::string, std::string>{"event_id", "payment.succeeded:P1"}));
  const StreamFields second = {{"event_id", "payment.succeeded:P2"},
                               {"type", "payment.succeeded"},
                               {"payment_no", "P}2"},
                               {"order_no", "O{2\""},
                               {"amount_cents", "7"},
                               {"detail", "]"},
                               {"occurred_at", "2026-12-02T15:27:48.456024Z"}};
  EXPECT_EQ((*two)[1], second);

  const auto one = message_events(R"({"event_id": "order.paid:O1", "type": "order.paid"})");
  ASSERT_TRUE(one);
  ASSERT_EQ(one->size(), 1U);
  EXPECT_EQ(one->front().size(), 2U);

  EXPECT_FALSE(message_events("[]"));
  EXPECT_FALSE(message_events("[{\"event_id\": \"e1\"}"));
  EXPECT_FALSE(message_events("[{\"event_id\": \"e1\"},]"));
  EXPECT_FALSE(message_events("[{\"event_id\": \"e1\"} {\"event_id\": \"e2\"}]"));
  EXPECT_FALSE(message_events("[{\"event_id\": \"e1\"}] x"));
  EXPECT_FALSE(message_events("[{\"type\": \"t\"}]"));
  EXPECT_FALSE(message_events("[\"event_id\"]"));
  EXPECT_FALSE(message_events("[{\"event_id\": \"unterminated}]"));
  EXPECT_FALSE(message_events(""));
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::persistence::events

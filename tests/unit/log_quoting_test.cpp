// Log values that came from a request (SPEC §14): observability::quoted escapes every byte a reader
// could take for a line end, a field break or a closing quote, and the strict line reader of the
// tests reads each value back exactly.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "observability/logger.hpp"
#include "support/log_lines.hpp"

namespace seatflow::observability {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::parse_log_line;

TEST(LogQuoting, PlainTextIsOnlyQuoted) {
  EXPECT_EQ(quoted_value(""), R"("")");
  EXPECT_EQ(quoted_value("pay-42"), R"("pay-42")");
  EXPECT_EQ(quoted_value("a b=c"), R"("a b=c")");
  EXPECT_EQ(quoted_value("caf\xc3\xa9 \xe6\x94\xaf\xe4\xbb\x98"),
            "\"caf\xc3\xa9 \xe6\x94\xaf\xe4\xbb\x98\"");
  EXPECT_EQ(quoted_value("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
}

TEST(LogQuoting, QuotesBackslashesAndControlsAreEscaped) {
  EXPECT_EQ(quoted_value(R"(say "hi")"), R"("say \"hi\"")");
  EXPECT_EQ(quoted_value(R"(a\b)"), R"("a\\b")");
  EXPECT_EQ(quoted_value("a\nb\rc\td"), R"("a\nb\rc\td")");
  EXPECT_EQ(quoted_value(std::string("a\0b", 3)), R"("a\u0000b")");
  EXPECT_EQ(quoted_value("\x1b[31m"), R"("\u001b[31m")");
  EXPECT_EQ(quoted_value("\x7f"), R"("\u007f")");
}

TEST(LogQuoting, UnicodeLineBreaksAndInvisiblesAreEscaped) {
  EXPECT_EQ(quoted_value("x\xc2\x85level=error"), R"("x\u0085level=error")");  // NEL
  EXPECT_EQ(quoted_value("a\xe2\x80\xa8"
                         "b\xe2\x80\xa9"),
            R"("a\u2028b\u2029")");
  EXPECT_EQ(quoted_value("\xc2\xa0"), R"("\u00a0")");                // no-break space
  EXPECT_EQ(quoted_value("\xe2\x80\x8b"), R"("\u200b")");            // zero width space
  EXPECT_EQ(quoted_value("\xe2\x80\xae"), R"("\u202e")");            // right-to-left override
  EXPECT_EQ(quoted_value("\xe2\x81\xa0"), R"("\u2060")");            // word joiner
  EXPECT_EQ(quoted_value("\xef\xbb\xbf"), R"("\ufeff")");            // byte order mark
  EXPECT_EQ(quoted_value("\xe3\x80\x80"), R"("\u3000")");            // ideographic space
  EXPECT_EQ(quoted_value("\xef\xbf\xbf"), R"("\uffff")");            // noncharacter
  EXPECT_EQ(quoted_value("\xf3\xa0\x80\x81"), R"("\udb40\udc01")");  // language tag U+E0001
}

TEST(LogQuoting, BytesThatAreNotUtf8AreHexEscaped) {
  EXPECT_EQ(quoted_value("\xff"), R"("\xff")");
  EXPECT_EQ(quoted_value("\xc0\xaf"), R"("\xc0\xaf")");                  // overlong '/'
  EXPECT_EQ(quoted_value("\xed\xa0\x80"), R"("\xed\xa0\x80")");          // a surrogate
  EXPECT_EQ(quoted_value("\xf4\x90\x80\x80"), R"("\xf4\x90\x80\x80")");  // above U+10FFFF
  EXPECT_EQ(quoted_value("\xe2\x80"), R"("\xe2\x80")");                  // cut short
  EXPECT_EQ(quoted_value("\xc2"
                         "A"),
            R"("\xc2A")");
}

// The reported injection: a validly signed id that, written bare, forged a second level and event.
TEST(LogQuoting, AnInjectedIdStaysOneValue) {
  const std::string id = "x\xc2\x85level=error event=forged \xe2\x80\xa8\"q\" \\ a=b\nlevel=info";
  const std::string line =
      "2026-01-01T00:00:00.000+0000 level=error module=persistence "
      "event=callback_conflict payment_no=" +
      quoted_value("p 1") + " callback_id=" + quoted_value(id) + " reason=digest_differs";
  std::string why;
  const auto parsed = parse_log_line(line, why);
  ASSERT_TRUE(parsed.has_value()) << why << "\n" << line;
  EXPECT_EQ(parsed->keys(), (std::vector<std::string>{"level", "module", "event", "payment_no",
                                                      "callback_id", "reason"}));
  EXPECT_EQ(parsed->value("level"), "error");
  EXPECT_EQ(parsed->value("event"), "callback_conflict");
  EXPECT_EQ(parsed->value("callback_id"), id);
  EXPECT_EQ(parsed->value("payment_no"), "p 1");
}

// Any bytes at all round-trip through quoted_value() and the reader, and never break the line.
TEST(LogQuoting, RandomBytesRoundTrip) {
  std::mt19937 random(47);
  std::uniform_int_distribution<int> length(0, 24);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 20000; ++round) {
    std::string text(static_cast<std::size_t>(length(random)), '\0');
    for (auto& c : text) {
      c = static_cast<char>(byte(random));
    }
    const std::string line = "t key=" + quoted_value(text) + " next=1";
    std::string why;
    const auto parsed = parse_log_line(line, why);
    ASSERT_TRUE(parsed.has_value()) << why << " for " << quoted_value(text);
    ASSERT_EQ(parsed->value("key"), text) << quoted_value(text);
    ASSERT_EQ(parsed->keys(), (std::vector<std::string>{"key", "next"}));
  }
}

// The reader is strict: what quoted_value() never writes is refused.
TEST(LogQuoting, TheReaderRefusesLinesThatDoNotParse) {
  std::string why;
  EXPECT_TRUE(parse_log_line("t a=1 b=\"x y\"", why).has_value()) << why;
  EXPECT_FALSE(parse_log_line("t a=1 a=2", why).has_value());
  EXPECT_FALSE(parse_log_line("t a=x y", why).has_value());
  EXPECT_FALSE(parse_log_line("t a=x=y", why).has_value());
  EXPECT_FALSE(parse_log_line("t a=\"x", why).has_value());
  EXPECT_FALSE(parse_log_line("t a=\"\\q\"", why).has_value());
  EXPECT_FALSE(parse_log_line("t a=\"x\xc2\x85\"", why).has_value());
  EXPECT_FALSE(parse_log_line("t a=\"x\xe2\x80\xa8\"", why).has_value());
  EXPECT_FALSE(parse_log_line("t a=1  b=2", why).has_value());
  EXPECT_FALSE(parse_log_line("t a=1 ", why).has_value());
  EXPECT_FALSE(parse_log_line("t a=", why).has_value());
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::observability

// Unit tests for codec::read_json_members: what it reads, what it refuses, and agreement with
// nlohmann::json's parser (the hmac dialect's previous reader) on seeds and their mutations.
#include "codec/json_members.hpp"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "persistence/drivers/pg.hpp"
#include "support/json_members_reference.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using Kind = codec::JsonMember::Kind;

constexpr std::array<std::string_view, 3> kNames{"a", "id", "n"};

struct Read {
  bool ok = false;
  std::array<codec::JsonMember, kNames.size()> members;
};

Read read(std::string_view body) {
  Read result;
  result.ok = codec::read_json_members(body, kNames, result.members);
  return result;
}

Read reference(std::string_view body) {
  Read result;
  result.ok = testing::JsonMembersReference::read(body, kNames, result.members);
  return result;
}

// Both readers agree: the same verdict and, for an accepted body, the same members. One deliberate
// difference: nlohmann::json stops reading at a raw NUL byte outside a string (so "{}\0junk" is a
// document to it); read_json_members refuses a raw NUL wherever it is, as RFC 8259 does.
::testing::AssertionResult agrees(std::string_view body) {
  const auto ours = read(body);
  if (body.find('\0') != std::string_view::npos) {
    return ours.ok ? ::testing::AssertionFailure() << "a raw NUL byte was accepted"
                   : ::testing::AssertionSuccess();
  }
  const auto theirs = reference(body);
  if (ours.ok != theirs.ok) {
    return ::testing::AssertionFailure() << "verdict " << ours.ok << " vs reference " << theirs.ok;
  }
  if (!ours.ok) {
    return ::testing::AssertionSuccess();
  }
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    const auto& a = ours.members[i];
    const auto& b = theirs.members[i];
    if (a.kind != b.kind || (a.kind == Kind::string && a.text != b.text) ||
        (a.kind == Kind::int64 && a.value != b.value)) {
      return ::testing::AssertionFailure() << "member " << kNames[i] << " differs";
    }
  }
  return ::testing::AssertionSuccess();
}

std::string printable(std::string_view body) {
  std::string out;
  for (const char c : body) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out.push_back(c);
    } else {
      constexpr std::string_view kHex = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xf]);
    }
  }
  return out;
}

TEST(JsonMembers, ReadsStringsIntegersAndOtherValues) {
  const auto r = read(R"({"a":"x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00y","id":-42,"n":true,"zz":[1]})");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.members[0].kind, Kind::string);
  EXPECT_EQ(r.members[0].text, "x\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80y");
  EXPECT_EQ(r.members[1].kind, Kind::int64);
  EXPECT_EQ(r.members[1].value, -42);
  EXPECT_EQ(r.members[2].kind, Kind::other);
  EXPECT_EQ(read(R"({"n":null})").members[2].kind, Kind::null);
  EXPECT_EQ(read(R"({"n":false})").members[2].kind, Kind::other);
}

TEST(JsonMembers, TheLastOccurrenceWinsAndNamesAreDecoded) {
  const auto r = read(R"({"id":"first","\u0069d":7,"a":{"id":"nested"},"n":[{"id":1}],"id":8})");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.members[1].kind, Kind::int64);
  EXPECT_EQ(r.members[1].value, 8);
  EXPECT_EQ(r.members[0].kind, Kind::other);
  EXPECT_EQ(r.members[2].kind, Kind::other);
  EXPECT_EQ(read(R"({"b":1})").members[0].kind, Kind::absent);
}

TEST(JsonMembers, IntegersOutsideInt64AndFractionsAreNotIntegers) {
  EXPECT_EQ(read(R"({"n":9223372036854775807})").members[2].value, INT64_MAX);
  EXPECT_EQ(read(R"({"n":-9223372036854775808})").members[2].value, INT64_MIN);
  for (const std::string_view body :
       {R"({"n":9223372036854775808})", R"({"n":-9223372036854775809})",
        R"({"n":123456789012345678901234567890})", R"({"n":1.0})", R"({"n":1e2})",
        R"({"n":-0.5E-3})", R"({"n":1e-400})"}) {
    const auto r = read(body);
    ASSERT_TRUE(r.ok) << body;
    EXPECT_EQ(r.members[2].kind, Kind::other) << body;
  }
}

TEST(JsonMembers, RefusesWhatIsNotOneJsonObject) {
  for (const std::string_view body : {"",
                                      " ",
                                      "[]",
                                      "\"a\"",
                                      "1",
                                      "null",
                                      "{",
                                      "{}{}",
                                      "{} x",
                                      R"({"a":1,})",
                                      R"({"a" 1})",
                                      R"({'a':1})",
                                      R"({"a":01})",
                                      R"({"a":-})",
                                      R"({"a":1.})",
                                      R"({"a":.5})",
                                      R"({"a":+1})",
                                      R"({"a":1e})",
                                      R"({"a":1e400})",
                                      R"({"a":tru})",
                                      R"({"a":nul})",
                                      R"({"a":[1,]})",
                                      R"({"a":{"b"}})",
                                      R"({"a":[}})",
                                      R"({"a":"\x"})",
                                      R"({"a":"\u12"})",
                                      R"({"a":"\ud800"})",
                                      R"({"a":"\udc00"})",
                                      R"({"a":"\ud800\u0041"})",
                                      "{\"a\":\"\x01\"}",
                                      "{\"a\":\"\xc0\xaf\"}",
                                      "{\"a\":\"\xed\xa0\x80\"}",
                                      "{\"a\":\"\xf4\x90\x80\x80\"}",
                                      "{\"a\":\"\xe5\xba\"}",
                                      "\xef\xbb{}",
                                      "{\"a\":\"unterminated}"}) {
    EXPECT_FALSE(read(body).ok) << printable(body);
  }
  using namespace std::string_view_literals;
  EXPECT_FALSE(read("{\"a\":1}\0junk"sv).ok);  // nlohmann::json would stop at the NUL
  EXPECT_FALSE(read("{\"a\":\"x\0y\"}"sv).ok);
  EXPECT_TRUE(read("\xef\xbb\xbf {\"a\":1}\r\n\t").ok);  // a leading BOM and any whitespace
  EXPECT_TRUE(read("{\"a\":\"\xe5\xba\xa7\xf0\x9f\x98\x80\"}").ok);
}

// A top-level array gives the exact text of each element, nested and escaped ones whole, and is
// checked as strictly as an object.
TEST(JsonMembers, ArrayElementsAreTheirExactTexts) {
  const auto elements = codec::json_array_elements(
      " [{\"a\": \"}]\\\"\"}, \n [1, {\"b\": null}] ,\"x\",-2.5e3, true] ");
  ASSERT_TRUE(elements);
  const std::vector<std::string_view> expected = {R"({"a": "}]\""})", R"([1, {"b": null}])",
                                                  R"("x")", "-2.5e3", "true"};
  EXPECT_EQ(*elements, expected);
  const auto empty = codec::json_array_elements("[ ]");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  for (const std::string_view bad :
       {"", "{}", "[", "[1,]", "[1 2]", "[1] x", "[{\"a\" 1}]", "[\"unterminated]", "[tru]"}) {
    EXPECT_FALSE(codec::json_array_elements(bad)) << bad;
  }
}

// nlohmann::json's verdict on a string array (the seat lists' previous reader).
std::optional<std::vector<std::string>> nlohmann_strings(const std::string& body) {
  try {
    const auto document = nlohmann::json::parse(body);
    if (!document.is_array()) {
      return std::nullopt;
    }
    std::vector<std::string> out;
    for (const auto& element : document) {
      if (!element.is_string()) {
        return std::nullopt;
      }
      out.push_back(element.get<std::string>());
    }
    return out;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

TEST(JsonMembers, StringArraysAreDecodedAndAnythingElseRefused) {
  const auto seats = codec::json_string_array(R"( ["A1", "B\"2\\", "\u5ea7\ud83d\ude00", ""] )");
  ASSERT_TRUE(seats);
  const std::vector<std::string> expected = {"A1", "B\"2\\", "\xe5\xba\xa7\xf0\x9f\x98\x80", ""};
  EXPECT_EQ(*seats, expected);
  ASSERT_TRUE(codec::json_string_array("[]"));
  EXPECT_TRUE(codec::json_string_array("[]")->empty());
  for (const std::string_view bad : {"", "{}", "\"A1\"", "[1]", "[\"A1\",null]", "[[\"A1\"]]",
                                     "[\"A1\",]", "[\"A1\"] x", "[\"\\ud83d\"]", "[\"A1"}) {
    EXPECT_FALSE(codec::json_string_array(bad)) << bad;
  }
  // persistence's json_strings reads the statements' seat lists with it, and throws on the rest.
  EXPECT_EQ(persistence::json_strings(R"(["A1","A2"])"), (std::vector<std::string>{"A1", "A2"}));
  EXPECT_THROW((void)persistence::json_strings(R"(["A1",2])"), std::runtime_error);
}

TEST(JsonMembers, StringArraysAgreeWithNlohmannOnMutations) {
  using namespace std::string_view_literals;
  // No raw NUL: nlohmann::json stops reading at one after the array (the difference noted above).
  constexpr auto kAlphabet = "\"\\[],u0fd8 \n\x1f\x80\xc2\xe5\xed\xf0\xff"sv;
  const std::string seed = R"(["A1","B-\u0032","\u5ea7\ud83d\ude00","x\"\\\/\b\f\n\r\t"])";
  std::mt19937 random(20261203);  // fixed: a failure reproduces
  std::size_t accepted = 0;
  for (int m = 0; m < 5'000; ++m) {
    std::string body = seed;
    const std::size_t at = random() % body.size();
    const char c = kAlphabet[random() % kAlphabet.size()];
    if (random() % 2 == 0) {
      body[at] = c;
    } else {
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(at), c);
    }
    const auto ours = codec::json_string_array(body);
    ASSERT_EQ(ours, nlohmann_strings(body)) << printable(body);
    accepted += ours ? 1 : 0;
  }
  EXPECT_GT(accepted, 500U);  // both verdicts are reached
}

TEST(JsonMembers, DeepNestingIsSkippedWithoutRecursion) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  EXPECT_TRUE(read(R"({"a":)" + deep + R"(,"id":1})").ok);
  EXPECT_FALSE(read(R"({"a":)" + deep + "]}").ok);
}

// The seeds of the comparison below: the shapes of callback bodies and the corners of the grammar.
const std::vector<std::string>& seeds() {
  static const std::vector<std::string> all{
      R"({"id":"cb-1","a":"P-1","n":1,"timestamp":1700000000000,"sign":"00ff"})",
      R"({"a":"x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00y","id":-42,"n":true})",
      R"({"id":[1,{"a":[null,false,{"id":"x"}]},-0.5e+3],"n":{"a":{}},"a":[]})",
      R"({"n":9223372036854775807,"id":-9223372036854775808,"a":18446744073709551616})",
      "\xef\xbb\xbf{\"a\":\"\xe5\xba\xa7\",\"id\":\"\xf0\x9f\x98\x80\",\"n\":1E5}",
      R"( { "a" : "\u0000" , "\u0069d" : 0 , "n" : -0 } )",
      R"({"a":1e-400,"id":1.5,"n":[[[[[]]]]]})",
      R"({})",
  };
  return all;
}

TEST(JsonMembers, AgreesWithNlohmannOnSeedsAndTheirMutations) {
  using namespace std::string_view_literals;
  constexpr auto kAlphabet =
      "\"\\{}[],:-+.eE019 \n\tutfnlsrabdDF8\x00\x1f\x7f\x80\xbf\xc2\xe0\xed\xef\xf0\xf4\xff"sv;
  constexpr int kMutationsPerSeed = 20'000;
  std::mt19937 random(20261202);  // fixed: a failure reproduces
  std::size_t accepted = 0;
  for (const auto& seed : seeds()) {
    ASSERT_TRUE(agrees(seed)) << printable(seed);
    ASSERT_TRUE(read(seed).ok) << printable(seed);
    for (int m = 0; m < kMutationsPerSeed; ++m) {
      std::string body = seed;
      const int edits = 1 + static_cast<int>(random() % 3);
      for (int e = 0; e < edits && !body.empty(); ++e) {
        const std::size_t at = random() % body.size();
        const char c = kAlphabet[random() % kAlphabet.size()];
        switch (random() % 4) {
          case 0:
            body[at] = c;
            break;
          case 1:
            body.insert(body.begin() + static_cast<std::ptrdiff_t>(at), c);
            break;
          case 2:
            body.erase(at, 1);
            break;
          default:
            body.insert(at, body.substr(random() % body.size(), random() % 8));
            break;
        }
      }
      ASSERT_TRUE(agrees(body)) << printable(body);
      accepted += read(body).ok ? 1 : 0;
    }
  }
  // The mutations reach both verdicts, so the comparison is not only of refusals.
  EXPECT_GT(accepted, 1000U);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

// Functional test of SPEC §14 "logs that parse": validly signed callbacks whose ids carry spaces,
// `=`, quotes, backslashes, U+0085 and U+2028 reach the 409 conflict line of the real engine, and
// every line the engine writes parses, strictly, to exactly the keys it wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/engine_fixture.hpp"
#include "support/log_lines.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using namespace std::chrono_literals;

// What a hostile gateway (or a leaked key) might put in an id, each after the test's prefix.
const std::vector<std::string> kHostileTails{
    " level=error event=forged",
    "\xc2\x85level=error event=forged module=http",
    "\xe2\x80\xa8"
    "event=forged \"quoted\" back\\slash",
    "\xe2\x80\xa9=\xe2\x80\x8b\xef\xbb\xbf trailing ",
};

std::size_t count_of(const std::string& log, std::string_view needle) {
  std::size_t count = 0;
  for (auto at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST(LogInjection, HostileIdsOnTheConflictLineParseToTheKeysTheEngineWrote) {
  Stores stores;
  TestEngine engine;
  ASSERT_TRUE(engine.healthy()) << engine.log();
  std::set<std::string> hostile_ids;
  std::set<std::string> hostile_payments;
  int n = 0;
  for (const auto& tail : kHostileTails) {
    const auto tag = std::to_string(n++);
    const auto payment = stores.id("pay" + tag) + tail;
    stores.create_pending(payment, stores.id("ord" + tag), stores.id("show" + tag), {"A1"});
    const auto callback_id = stores.id("cb" + tag) + tail;
    const auto failed = engine.notify(signed_body(callback_id, payment, 2));
    ASSERT_EQ(failed.status, 200) << failed.body << failed.error;
    // Validly signed, same id, other content: the 409 conflict, logged with both ids.
    const auto conflict = engine.notify(signed_body(callback_id, payment, 1));
    ASSERT_EQ(conflict.status, 409) << conflict.body << conflict.error;
    hostile_ids.insert(callback_id);
    hostile_payments.insert(payment);
  }
  // A newline is refused by the dialect (400) before anything is logged or written.
  const auto newline = engine.notify(signed_body(stores.id("cb-nl") + "\nlevel=error", "p", 1));
  EXPECT_EQ(newline.status, 400) << newline.body;

  for (auto waited = 0ms;
       count_of(engine.log(), "event=callback_conflict") < kHostileTails.size() && waited < 5s;
       waited += 50ms) {
    std::this_thread::sleep_for(50ms);
  }
  const auto full = engine.log();
  ASSERT_EQ(count_of(full, "event=callback_conflict"), kHostileTails.size()) << full;

  const std::set<std::string> levels{"trace", "debug", "info", "warning", "error", "critical"};
  std::set<std::string> seen_ids;
  std::set<std::string> seen_payments;
  std::size_t parsed_lines = 0;
  for (const auto line : log_lines(full)) {
    std::string why;
    const auto parsed = parse_log_line(line, why);
    ASSERT_TRUE(parsed.has_value()) << why << "\nline: " << line;
    ++parsed_lines;
    const auto keys = parsed->keys();
    ASSERT_GE(keys.size(), 3U) << line;
    EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 3),
              (std::vector<std::string>{"level", "module", "event"}))
        << line;
    EXPECT_TRUE(levels.contains(*parsed->value("level"))) << line;
    if (parsed->value("event") == "callback_conflict") {
      EXPECT_EQ(keys, (std::vector<std::string>{"level", "module", "event", "payment_no",
                                                "callback_id", "reason"}))
          << line;
      EXPECT_EQ(parsed->value("level"), "error") << line;
      EXPECT_EQ(parsed->value("reason"), "digest_differs") << line;
      seen_ids.insert(parsed->value("callback_id").value_or(""));
      seen_payments.insert(parsed->value("payment_no").value_or(""));
    }
    EXPECT_NE(parsed->value("event"), "forged") << line;
  }
  EXPECT_GT(parsed_lines, kHostileTails.size());
  EXPECT_EQ(seen_ids, hostile_ids);
  EXPECT_EQ(seen_payments, hostile_payments);
  // The raw separators never reach the log, and the refused newline id was never logged.
  EXPECT_EQ(full.find("\xc2\x85"), std::string::npos);
  EXPECT_EQ(full.find("\xe2\x80\xa8"), std::string::npos);
  EXPECT_EQ(full.find("cb-nl"), std::string::npos);
  EXPECT_EQ(engine.callbacks("conflict"), static_cast<double>(kHostileTails.size()));
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

// The error categories of persistence/ and channels/: names, messages, equivalence, and the
// status table's answer for each code.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <system_error>

#include "channels/channel.hpp"
#include "channels/errc.hpp"
#include "http/errc.hpp"
#include "http/status.hpp"
#include "persistence/drivers/errc.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

constexpr persistence::errc kPersistenceCodes[] = {
    persistence::errc::pg_unavailable,    persistence::errc::redis_unavailable,
    persistence::errc::deadline_exceeded, persistence::errc::commit_unknown,
    persistence::errc::conflict,          persistence::errc::not_found,
    persistence::errc::already_exists};

constexpr channels::errc kChannelCodes[] = {
    channels::errc::malformed,       channels::errc::bad_status,
    channels::errc::bad_signature,   channels::errc::stale,
    channels::errc::unhandled_event, channels::errc::unknown_channel,
    channels::errc::rejected_answer};

TEST(ErrcTest, PersistenceCategoryHasANameAndADistinctMessagePerCode) {
  std::set<std::string> messages;
  for (const auto value : kPersistenceCodes) {
    const std::error_code code = value;  // implicit: is_error_code_enum
    EXPECT_TRUE(code) << code.message();
    EXPECT_STREQ(code.category().name(), "persistence");
    EXPECT_NE(code.message(), "unknown persistence error");
    EXPECT_TRUE(messages.insert(code.message()).second) << "repeated: " << code.message();
  }
  EXPECT_FALSE(std::error_code(persistence::errc::success));
  EXPECT_EQ(std::error_code(persistence::errc::not_found).message(), "not found");
  EXPECT_EQ(persistence::error_category().message(999), "unknown persistence error");
}

TEST(ErrcTest, ChannelsCategoryHasANameAndADistinctMessagePerCode) {
  std::set<std::string> messages;
  for (const auto value : kChannelCodes) {
    const std::error_code code = value;
    EXPECT_TRUE(code) << code.message();
    EXPECT_STREQ(code.category().name(), "channels");
    EXPECT_NE(code.message(), "unknown channels error");
    EXPECT_TRUE(messages.insert(code.message()).second) << "repeated: " << code.message();
  }
  EXPECT_FALSE(std::error_code(channels::errc::success));
  // The notify path's 404 body is this message.
  EXPECT_EQ(std::error_code(channels::errc::unknown_channel).message(),
            "unknown or disabled channel");
}

TEST(ErrcTest, HttpCategoryHasANameAndADistinctMessagePerCode) {
  std::set<std::string> messages;
  for (const auto value : {http::errc::bad_request, http::errc::missing_credentials,
                           http::errc::bad_credentials, http::errc::api_disabled}) {
    const std::error_code code = value;
    EXPECT_TRUE(code) << code.message();
    EXPECT_STREQ(code.category().name(), "http");
    EXPECT_NE(code.message(), "unknown http error");
    EXPECT_TRUE(messages.insert(code.message()).second) << "repeated: " << code.message();
  }
  EXPECT_FALSE(std::error_code(http::errc::success));
}

TEST(ErrcTest, CodesCompareByCategoryNotByValue) {
  const std::error_code not_found = persistence::errc::not_found;
  EXPECT_EQ(not_found, persistence::errc::not_found);
  EXPECT_NE(not_found, persistence::errc::conflict);
  // Same integer, other category: never equal.
  const std::error_code channel_code(static_cast<int>(persistence::errc::not_found),
                                     channels::error_category());
  EXPECT_NE(channel_code, not_found);
  EXPECT_NE(std::error_code(channels::errc::malformed), std::errc::invalid_argument);
  EXPECT_NE(std::error_code(persistence::errc::pg_unavailable),
            std::error_code(static_cast<int>(persistence::errc::pg_unavailable),
                            std::generic_category()));
}

TEST(ErrcTest, RejectReasonIsTheChannelsErrc) {
  const channels::Result<int> rejection = channels::reject(channels::RejectReason::stale, "old");
  EXPECT_EQ(rejection.error(), channels::errc::stale);
  EXPECT_EQ(channels::errc_of(rejection.error()), channels::RejectReason::stale);
  EXPECT_EQ(rejection.detail(), "old");
  EXPECT_TRUE(channels::is_signature_failure(channels::RejectReason::bad_signature));
  // A stale message is authentic: counted as `stale`, never as a forgery (SPEC §14).
  EXPECT_FALSE(channels::is_signature_failure(channels::RejectReason::stale));
  EXPECT_EQ(http::callback_result(channels::errc::stale), domain::CallbackResult::stale);
  EXPECT_EQ(http::callback_result(channels::errc::bad_signature),
            domain::CallbackResult::rejected_signature);
  EXPECT_EQ(http::http_status(channels::errc::stale), 401);
  EXPECT_FALSE(channels::is_signature_failure(channels::RejectReason::malformed));
}

TEST(ErrcTest, OnlyTheStoresFailuresAreUnavailable) {
  for (const auto value : kPersistenceCodes) {
    const bool transient = value == persistence::errc::pg_unavailable ||
                           value == persistence::errc::redis_unavailable ||
                           value == persistence::errc::deadline_exceeded ||
                           value == persistence::errc::commit_unknown;
    EXPECT_EQ(persistence::is_unavailable(value), transient) << std::error_code(value).message();
    EXPECT_EQ(http::http_status(std::error_code(value)),
              transient ? 503 : http::http_status(value));
  }
}

// The status table, one row per value: a change here is a change of the gateways' contract.
TEST(StatusTableTest, CallbackResults) {
  using domain::CallbackResult;
  const std::pair<CallbackResult, int> rows[] = {{CallbackResult::applied, 200},
                                                 {CallbackResult::duplicate, 200},
                                                 {CallbackResult::ignored, 200},
                                                 {CallbackResult::discrepancy, 200},
                                                 {CallbackResult::conflict, 409},
                                                 {CallbackResult::rejected_signature, 401},
                                                 {CallbackResult::rejected_param, 400},
                                                 {CallbackResult::unknown_payment, 404},
                                                 {CallbackResult::mark_sold_failed, 503},
                                                 {CallbackResult::unavailable, 503},
                                                 {CallbackResult::stale, 401}};
  static_assert(std::size(rows) == domain::kCallbackResultCount);
  for (const auto& [result, status] : rows) {
    EXPECT_EQ(http::http_status(result), status) << domain::to_string(result);
    EXPECT_EQ(http::callback_status(result), status) << domain::to_string(result);
    EXPECT_EQ(http::is_ack(http::http_status(result)), status == 200);
  }
}

TEST(StatusTableTest, ChannelAndStoreCodes) {
  EXPECT_EQ(http::http_status(channels::errc::unknown_channel), 404);
  EXPECT_EQ(http::http_status(std::error_code(channels::errc::bad_signature)), 401);
  EXPECT_EQ(http::http_status(std::error_code(channels::errc::malformed)), 400);
  EXPECT_EQ(http::http_status(std::error_code(channels::errc::unhandled_event)), 200);
  EXPECT_EQ(http::http_status(channels::errc::rejected_answer), 502);
  EXPECT_EQ(http::http_status(std::error_code(http::errc::bad_request)), 400);
  EXPECT_EQ(http::http_status(std::error_code(http::errc::missing_credentials)), 401);
  EXPECT_EQ(http::http_status(std::error_code(http::errc::bad_credentials)), 401);
  EXPECT_EQ(http::http_status(std::error_code(http::errc::api_disabled)), 401);
  EXPECT_EQ(http::http_status(persistence::errc::not_found), 404);
  EXPECT_EQ(http::http_status(persistence::errc::conflict), 409);
  EXPECT_EQ(http::http_status(persistence::errc::already_exists), 409);
  EXPECT_EQ(http::http_status(persistence::Done::created), 201);
  EXPECT_EQ(http::http_status(persistence::Done::already), 200);
  EXPECT_EQ(http::http_status(persistence::Done::ok), 200);
  EXPECT_EQ(http::http_status(persistence::errc::redis_unavailable), 503);
  EXPECT_EQ(http::http_status(std::error_code(persistence::errc::pg_unavailable)), 503);
  EXPECT_EQ(http::http_status(actors::RefundStatus::gateway_failed), 502);
  EXPECT_EQ(http::http_status(std::make_error_code(std::errc::io_error)), 503);
  // SPEC §14: an authentic message outside the window is counted apart from forgeries.
  EXPECT_EQ(http::callback_result(channels::errc::stale), domain::CallbackResult::stale);
  EXPECT_EQ(http::callback_result(channels::errc::bad_status),
            domain::CallbackResult::rejected_param);
  EXPECT_EQ(http::callback_result(channels::errc::unhandled_event),
            domain::CallbackResult::ignored);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

// Discrepancy refunds end to end below HTTP (SPEC §12): the refunder with real PostgreSQL, each
// channel's real refund request through net::HttpClient to a fake gateway that verifies the
// merchant's signature and answers signed — success, refusal, an unreachable gateway, a bad
// signature on the answer, a second request, and an attempt left pending by a crash.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "actors/discrepancy_refunder.hpp"
#include "channels/alipay/alipay_refund.hpp"
#include "channels/hmac/hmac_refund.hpp"
#include "channels/wechat/wechat_refund.hpp"
#include "net/http_client.hpp"
#include "persistence/stores/refund_store.hpp"
#include "persistence/stores/sql.hpp"
#include "persistence/stores/status_sql.hpp"
#include "support/fake_gateways.hpp"
#include "support/process.hpp"
#include "support/stores.hpp"
#include "support/test_http_server.hpp"
#include "support/test_keys.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using actors::DiscrepancyRefunder;
using actors::RefundCallResult;
using actors::RefundStatus;
using testing::FakeAnswer;
using testing::FakeTrade;
using testing::test_key;

const std::string kAppId = "2021000000000001";
const std::string kMchid = "1900000001";
const std::string kMerchantSerial = "3775B6A45ACD588826D15E583A95F5DD";
const std::string kPlatformSerial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";
const std::string kHmacSecret = "refund-integration-secret";
// A discrepancy's PENDING refund as another engine's attempt wrote it ($1 the discrepancy, $2 the
// refund number, $3 the channel), its attempt started at `started_at` (SQL).
std::string insert_refund(std::string_view started_at) {
  return "INSERT INTO refund (refund_no, payment_no, order_no, channel, amount_cents, source, "
         "  discrepancy_id, attempt_started_at) "
         "SELECT $2, p.payment_no, p.order_no, $3, 5000, 'discrepancy', d.id, " +
         std::string(started_at) +
         " FROM payment_discrepancy d JOIN payment_order p ON p.payment_no = d.payment_no "
         "WHERE d.id = $1";
}

// Shorter than the fake's stall, so the unreachable test does not wait for the stalled answer.
constexpr net::ClientLimits kLimits{1000, 1000, 256 * 1024};

net::Url url_of(const std::string& text) {
  const auto url = net::parse_url(text);
  EXPECT_TRUE(url.ok()) << text;
  return url.ok() ? url.value() : net::Url{};
}

// One channel's fake gateway and the dialect that speaks to it (or to `url` when given).
struct Gateway {
  std::unique_ptr<testing::FakeGatewayState> fake;
  std::shared_ptr<const channels::RefundDialect> dialect;
  std::string paid_state;  // how the fake names a paid trade
};

Gateway make_gateway(const std::string& channel, const std::string& url_override = {}) {
  // The key the fakes forge answers with, made now: made on first use inside a fake's handler it
  // could take longer than the client's deadline on a loaded machine.
  (void)test_key("gateway-impostor");
  Gateway gateway;
  if (channel == "alipay") {
    auto fake = std::make_unique<testing::FakeAlipay>(kAppId, test_key("alipay-query-merchant"),
                                                      test_key("alipay"));
    gateway.dialect = std::make_shared<channels::AlipayRefund>(channels::AlipayQueryConfig{
        kAppId, url_of(url_override.empty() ? fake->url() : url_override + "/gateway.do"),
        test_key("alipay-query-merchant").private_key, test_key("alipay").public_key});
    gateway.fake = std::move(fake);
    gateway.paid_state = "TRADE_SUCCESS";
  } else if (channel == "wechat") {
    auto fake = std::make_unique<testing::FakeWechatPay>(kMchid, kMerchantSerial,
                                                         test_key("wechat-query-merchant"),
                                                         kPlatformSerial, test_key("wechat"));
    gateway.dialect = std::make_shared<channels::WechatRefund>(
        channels::WechatQueryConfig{kMchid,
                                    url_of(url_override.empty() ? fake->url() : url_override),
                                    test_key("wechat-query-merchant").private_key,
                                    kMerchantSerial,
                                    {{kPlatformSerial, test_key("wechat").public_key}}});
    gateway.fake = std::move(fake);
    gateway.paid_state = "SUCCESS";
  } else {
    auto fake = std::make_unique<testing::FakeHmacGateway>(kHmacSecret);
    gateway.dialect = std::make_shared<channels::HmacRefund>(
        channels::HmacConfig{{kHmacSecret}, 300'000},
        url_of(url_override.empty() ? fake->url() : url_override));
    gateway.fake = std::move(fake);
    gateway.paid_state = "paid";
  }
  return gateway;
}

class DiscrepancyRefund : public ::testing::TestWithParam<std::string> {
 protected:
  DiscrepancyRefund()
      : pg_(testing::test_pg_dsn(), 5000, nullptr, &persistence::prepare_statements),
        store_(pg_),
        gateway_(make_gateway(GetParam())),
        refunder_({gateway_.dialect},
                  std::make_unique<net::HttpClient>(kLimits, testing::make_test_ca().ca_pem_path),
                  metrics_) {}

  // A cancelled order whose closed payment was paid at the gateway anyway: the discrepancy the
  // callback path records, and the trade the fake gateway knows.
  std::int64_t paid_after_cancel(const std::string& name,
                                 const std::string& kind = "paid_after_cancel") {
    const auto order = stores_.id(name + "-o");
    const auto payment = stores_.id(name);
    stores_.create_order(order, stores_.id("show"), {name + "-seat"}, 5000, 2);
    stores_.create_payment(payment, order, GetParam(), 5000, 3);
    gateway_.fake->set_trade(payment, FakeTrade{gateway_.paid_state, 5000, "T-" + name});
    pqxx::work tx(stores_.pg());
    const auto id = tx.exec_params1(
                          "INSERT INTO payment_discrepancy (payment_no, order_no, kind) "
                          "VALUES ($1, $2, $3) RETURNING id",
                          payment, order, kind)[0]
                        .as<std::int64_t>();
    tx.commit();
    return id;
  }

  std::string sql_text(const std::string& sql, std::int64_t id) {
    pqxx::work tx(stores_.pg());
    const auto rows = tx.exec_params(sql, id);
    return rows.empty() || rows[0][0].is_null() ? std::string() : rows[0][0].as<std::string>();
  }
  // The refund's status as the API names it ("failed": PENDING, its last attempt failed).
  std::string refund_status(std::int64_t id) {
    pqxx::work tx(stores_.pg());
    const auto rows = tx.exec_params(
        "SELECT status, attempt_finished_at IS NOT NULL FROM refund WHERE discrepancy_id = $1", id);
    if (rows.empty()) {
      return {};
    }
    const auto status = persistence::stored_refund_status(rows[0][0].as<int>());
    if (status == domain::RefundStatus::pending && rows[0][1].as<bool>()) {
      return "failed";
    }
    return std::string(domain::to_string(status));
  }
  std::string refund_no(std::int64_t id) {
    return sql_text("SELECT refund_no FROM refund WHERE discrepancy_id = $1", id);
  }
  std::string refund_reason(std::int64_t id) {
    pqxx::work tx(stores_.pg());
    const auto rows = tx.exec_params(
        "SELECT CASE WHEN status = $2 THEN gateway_note ELSE failure_reason END FROM refund "
        "WHERE discrepancy_id = $1",
        id, persistence::status_sql::code(domain::RefundStatus::succeeded));
    return rows.empty() || rows[0][0].is_null() ? std::string() : rows[0][0].as<std::string>();
  }
  bool resolved(std::int64_t id) {
    return sql_text("SELECT resolved_at IS NOT NULL FROM payment_discrepancy WHERE id = $1", id) ==
           "t";
  }
  // The discrepancy.refunded events of discrepancy `id` (their details: the refund numbers).
  std::vector<std::string> refunded_events(std::int64_t id) {
    std::vector<std::string> details;
    for (const auto& event : stores_.all_events()) {
      if (event.event_id == "discrepancy.refunded:" + std::to_string(id)) {
        details.push_back(event.detail);
      }
    }
    return details;
  }
  std::uint64_t counted(RefundCallResult result) {
    const auto channel = *domain::parse_channel(GetParam());
    return refunder_.probe().refunds(channel, result);
  }

  testing::Stores stores_;
  persistence::PgSession pg_;
  persistence::RefundStore store_;
  Gateway gateway_;
  observability::Registry metrics_;
  DiscrepancyRefunder refunder_;
};

TEST_P(DiscrepancyRefund, ASuccessResolvesTheDiscrepancyOnceWithItsEvent) {
  const auto id = paid_after_cancel("ok");
  const auto run = refunder_.run(store_, id);
  ASSERT_EQ(run.status, RefundStatus::refunded) << run.detail;
  ASSERT_TRUE(run.outcome && run.discrepancy && run.discrepancy->refund);
  EXPECT_EQ(run.outcome->status, "succeeded");
  EXPECT_EQ(run.discrepancy->refund->status, "succeeded");
  EXPECT_EQ(run.discrepancy->refund->reason, run.outcome->reason);
  EXPECT_EQ(run.discrepancy->refund->refund_no, refund_no(id));
  EXPECT_EQ(run.discrepancy->refund->attempts, 1);
  EXPECT_EQ(run.discrepancy->id, id);
  EXPECT_EQ(run.discrepancy->kind, "paid_after_cancel");
  EXPECT_TRUE(run.discrepancy->resolved_at.has_value());
  EXPECT_TRUE(resolved(id));
  EXPECT_EQ(refund_status(id), "succeeded");
  EXPECT_EQ(refunded_events(id), std::vector<std::string>{refund_no(id)});
  EXPECT_EQ(gateway_.fake->refunds_made(), 1);
  EXPECT_EQ(gateway_.fake->refunded_cents(), 5000);
  EXPECT_EQ(counted(RefundCallResult::succeeded), 1U);
  // A second request is refused before the gateway is asked again.
  const auto again = refunder_.run(store_, id);
  EXPECT_EQ(again.status, RefundStatus::conflict);
  EXPECT_EQ(again.detail, "the discrepancy is already refunded");
  EXPECT_EQ(gateway_.fake->refund_requests().size(), 1U);
  EXPECT_EQ(refunded_events(id).size(), 1u);
}

TEST_P(DiscrepancyRefund, ARefusalLeavesItOpenWithTheReasonAndARetryReusesTheNumber) {
  const auto id = paid_after_cancel("refused");
  gateway_.fake->set_answer(FakeAnswer::refuse);
  const auto run = refunder_.run(store_, id);
  ASSERT_EQ(run.status, RefundStatus::gateway_failed) << run.detail;
  EXPECT_TRUE(run.detail.starts_with("gateway refused: ")) << run.detail;
  ASSERT_TRUE(run.outcome && run.discrepancy && run.discrepancy->refund);
  EXPECT_EQ(run.outcome->status, "failed");
  EXPECT_EQ(run.outcome->reason, run.detail);
  EXPECT_EQ(run.discrepancy->refund->status, "failed");
  EXPECT_EQ(run.discrepancy->refund->reason, run.detail);
  EXPECT_FALSE(run.discrepancy->resolved_at.has_value());
  EXPECT_FALSE(resolved(id));
  EXPECT_EQ(refund_status(id), "failed");
  EXPECT_EQ(refund_reason(id), run.detail);
  EXPECT_EQ(gateway_.fake->refunds_made(), 0);
  EXPECT_EQ(refunded_events(id).size(), 0u);
  EXPECT_EQ(counted(RefundCallResult::refused), 1U);
  const auto first_number = refund_no(id);
  gateway_.fake->set_answer(FakeAnswer::honest);
  const auto retry = refunder_.run(store_, id);
  ASSERT_EQ(retry.status, RefundStatus::refunded) << retry.detail;
  const auto requests = gateway_.fake->refund_requests();
  ASSERT_EQ(requests.size(), 2U);
  EXPECT_EQ(requests[0], first_number);
  EXPECT_EQ(requests[1], first_number);
  EXPECT_EQ(gateway_.fake->refunds_made(), 1);
  EXPECT_TRUE(resolved(id));
}

TEST_P(DiscrepancyRefund, AStalledGatewayFailsWithinTheDeadlineAndStaysOpen) {
  const auto id = paid_after_cancel("stalled");
  gateway_.fake->set_answer(FakeAnswer::stall);
  const auto start = std::chrono::steady_clock::now();
  const auto run = refunder_.run(store_, id);
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(testing::kFakeStallMs));
  ASSERT_EQ(run.status, RefundStatus::gateway_failed) << run.detail;
  EXPECT_EQ(run.detail, "gateway unreachable: timed out");
  EXPECT_FALSE(resolved(id));
  EXPECT_EQ(refund_status(id), "failed");
  EXPECT_EQ(counted(RefundCallResult::unreachable), 1U);
}

TEST_P(DiscrepancyRefund, AClosedPortIsUnreachableAndStaysOpen) {
  const auto closed =
      make_gateway(GetParam(), "https://127.0.0.1:" + std::to_string(testing::free_port()));
  observability::Registry metrics;
  DiscrepancyRefunder refunder(
      {closed.dialect},
      std::make_unique<net::HttpClient>(kLimits, testing::make_test_ca().ca_pem_path), metrics);
  const auto id = paid_after_cancel("closed");
  const auto start = std::chrono::steady_clock::now();
  const auto run = refunder.run(store_, id);
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(kLimits.total_timeout_ms + 500));
  ASSERT_EQ(run.status, RefundStatus::gateway_failed) << run.detail;
  EXPECT_TRUE(run.detail.starts_with("gateway unreachable: ")) << run.detail;
  EXPECT_FALSE(resolved(id));
}

TEST_P(DiscrepancyRefund, AnAnswerWithABadSignatureProvesNothing) {
  const auto id = paid_after_cancel("forged");
  gateway_.fake->set_answer(FakeAnswer::bad_signature);
  const auto run = refunder_.run(store_, id);
  ASSERT_EQ(run.status, RefundStatus::gateway_failed) << run.detail;
  EXPECT_TRUE(run.detail.starts_with("gateway answer not accepted: ")) << run.detail;
  ASSERT_TRUE(run.discrepancy && run.discrepancy->refund);
  EXPECT_EQ(run.discrepancy->refund->status, "failed");
  EXPECT_FALSE(resolved(id));
  EXPECT_EQ(refund_status(id), "failed");
  EXPECT_EQ(refunded_events(id).size(), 0u);
  EXPECT_EQ(counted(RefundCallResult::rejected), 1U);
  // The fake did refund (only its answer was forged): the retry under the same number is the
  // same refund, and the gateway answers it without taking money twice.
  gateway_.fake->set_answer(FakeAnswer::honest);
  ASSERT_EQ(refunder_.run(store_, id).status, RefundStatus::refunded);
  EXPECT_EQ(gateway_.fake->refunds_made(), 1);
  EXPECT_EQ(gateway_.fake->refunded_cents(), 5000);
}

TEST_P(DiscrepancyRefund, ASecondRequestWhileOneIsInFlightIsAConflict) {
  const auto id = paid_after_cancel("twice");
  // In this engine: the claim that the engine takes before it queues the refund.
  ASSERT_EQ(refunder_.claim(id), DiscrepancyRefunder::Claim::taken);
  EXPECT_EQ(refunder_.claim(id), DiscrepancyRefunder::Claim::in_flight);
  refunder_.release(id);
  EXPECT_EQ(refunder_.claim(id), DiscrepancyRefunder::Claim::taken);
  refunder_.release(id);
  // Across engines: a pending attempt within its lease.
  {
    pqxx::work tx(stores_.pg());
    tx.exec_params(insert_refund("now()"), id, "rfd_" + std::to_string(id) + "_live", GetParam());
    tx.commit();
  }
  const auto run = refunder_.run(store_, id);
  EXPECT_EQ(run.status, RefundStatus::conflict);
  EXPECT_EQ(run.detail, "a refund of this discrepancy is in flight");
  EXPECT_EQ(gateway_.fake->refund_requests().size(), 0U);
}

TEST_P(DiscrepancyRefund, AnAttemptLeftPendingByACrashIsRetriedWithTheSameNumber) {
  const auto id = paid_after_cancel("crashed");
  const std::string number = "rfd_" + std::to_string(id) + "_crashed";
  {
    pqxx::work tx(stores_.pg());
    tx.exec_params(insert_refund("now() - interval '1 hour'"), id, number, GetParam());
    tx.commit();
  }
  const auto run = refunder_.run(store_, id);
  ASSERT_EQ(run.status, RefundStatus::refunded) << run.detail;
  EXPECT_EQ(gateway_.fake->refund_requests(), std::vector<std::string>{number});
  EXPECT_EQ(refund_no(id), number);
  EXPECT_EQ(sql_text("SELECT attempts FROM refund WHERE discrepancy_id = $1", id), "2");
  EXPECT_TRUE(resolved(id));
}

TEST_P(DiscrepancyRefund, OnlyMoneyTakenForNothingIsRefundable) {
  const auto conflict = paid_after_cancel("seats", "seat_conflict");
  const auto run = refunder_.run(store_, conflict);
  EXPECT_EQ(run.status, RefundStatus::conflict);
  EXPECT_EQ(run.detail,
            "only paid_after_cancel and paid_after_refund discrepancies can be refunded");
  EXPECT_EQ(refund_status(conflict), "");
  const auto after_refund = paid_after_cancel("late", "paid_after_refund");
  EXPECT_EQ(refunder_.run(store_, after_refund).status, RefundStatus::refunded);
  EXPECT_EQ(refunder_.run(store_, 999'999'999'999).status, RefundStatus::not_found);
  // Resolved by hand first: nothing to refund any more.
  const auto by_hand = paid_after_cancel("by-hand");
  {
    pqxx::work tx(stores_.pg());
    tx.exec_params("UPDATE payment_discrepancy SET resolved_at = now() WHERE id = $1", by_hand);
    tx.commit();
  }
  EXPECT_EQ(refunder_.run(store_, by_hand).detail, "the discrepancy is already resolved");
  EXPECT_EQ(gateway_.fake->refunds_made(), 1);
}

INSTANTIATE_TEST_SUITE_P(Channels, DiscrepancyRefund, ::testing::Values("hmac", "alipay", "wechat"),
                         [](const auto& info) { return info.param; });

TEST(DiscrepancyRefundChannels, StandardPaymentsAndChannelsWithoutADialectAreNotRefundable) {
  testing::Stores stores;
  persistence::PgSession pg(testing::test_pg_dsn(), 5000, nullptr,
                            &persistence::prepare_statements);
  persistence::RefundStore store(pg);
  const auto gateway = make_gateway("hmac");
  observability::Registry metrics;
  DiscrepancyRefunder refunder(
      {gateway.dialect},
      std::make_unique<net::HttpClient>(kLimits, testing::make_test_ca().ca_pem_path), metrics);
  for (const std::string channel : {"stripe", "standard", "alipay"}) {
    const auto order = stores.id(channel + "-o");
    const auto payment = stores.id(channel);
    stores.create_order(order, stores.id("show"), {channel + "-seat"}, 5000, 2);
    stores.create_payment(payment, order, channel, 5000, 3);
    pqxx::work tx(stores.pg());
    const auto id = tx.exec_params1(
                          "INSERT INTO payment_discrepancy (payment_no, order_no, kind) "
                          "VALUES ($1, $2, 'paid_after_cancel') RETURNING id",
                          payment, order)[0]
                        .as<std::int64_t>();
    tx.commit();
    const auto run = refunder.run(store, id);
    EXPECT_EQ(run.status, RefundStatus::conflict) << channel;
    // Stripe refunds go through its refund dialect (channels/stripe/stripe_refund.hpp) when the
    // API key is set; this refunder has none.
    EXPECT_EQ(run.detail,
              channel == "standard"
                  ? std::string("standard payments cannot be refunded through SeatFlow: refund "
                                "them at the gateway")
                  : "no refund gateway is configured for channel " + channel);
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

// The bill test world: private database, fake gateway, runner, seeding and reading helpers.
#include "support/bill_world.hpp"

#include <gtest/gtest.h>

#include "channels/hmac/hmac_bill.hpp"
#include "http/status.hpp"
#include "persistence/stores/sql.hpp"

namespace seatflow::testing {

BillWorld::BillWorld(actors::BillSettings settings) : stores_(std::make_unique<Stores>(db_.dsn())) {
  const auto store_settings = actors::bill_store_settings({}, settings);
  pg_ = std::make_unique<persistence::PgSession>(db_.dsn(), store_settings.pg, nullptr, nullptr,
                                                 &persistence::prepare_statements);
  redis_ = std::make_unique<persistence::RedisClient>(test_redis_endpoint(), 2000, nullptr);
  seats_ = std::make_unique<persistence::SeatStore>(*redis_);
  callbacks_ =
      std::make_unique<persistence::CallbackStore>(*pg_, *seats_, nullptr, &http::callback_status);
  store_ = std::make_unique<persistence::BillStore>(*pg_);
  const auto url = net::parse_url(gateway_.url());
  EXPECT_TRUE(url.ok()) << gateway_.url();
  std::vector<std::shared_ptr<const channels::BillDialect>> dialects = {
      std::make_shared<channels::HmacBill>(channels::HmacConfig{{kBillSecret}, 300'000},
                                           url.value())};
  runner_ = std::make_unique<actors::BillRunner>(
      dialects, settings, net::ClientLimits{2000, 5000, 1 << 20}, "",
      [this](domain::VerifiedCallback callback, actors::ReplyFn reply) {
        reply(callbacks_->process(callback));
      },
      metrics_);
}

actors::BillRunResult BillWorld::run(const std::string& date) {
  return actors::run_bill(*runner_, *store_, domain::Channel::hmac, date,
                          [](const actors::BillRunResult&) {});
}

std::string BillWorld::seed(const std::string& name, int payment_status, int order_status,
                            std::int64_t amount_cents, const std::string& trade,
                            std::int64_t at_ms) {
  const auto payment_no = stores_->id("P-" + name);
  const auto order_no = stores_->id("O-" + name);
  stores_->create_order(order_no, stores_->id("show"), {"S" + std::to_string(++seats_made_)},
                        amount_cents, order_status);
  stores_->create_payment(payment_no, order_no, "hmac", amount_cents, payment_status);
  pqxx::work tx(stores_->pg());
  tx.exec_params(
      "UPDATE payment_order SET channel_trade_no = NULLIF($2, ''), "
      "paid_at = CASE WHEN $3::bigint > 0 THEN to_timestamp($3::bigint / 1000.0) END, "
      "updated_at = CASE WHEN $3::bigint > 0 THEN to_timestamp($3::bigint / 1000.0) "
      "  ELSE updated_at END WHERE payment_no = $1",
      payment_no, trade, at_ms);
  tx.commit();
  return payment_no;
}

std::string BillWorld::pending(const std::string& name, std::int64_t amount_cents) {
  const auto payment_no = stores_->id("P-" + name);
  stores_->create_pending(payment_no, stores_->id("O-" + name), stores_->id("show"),
                          {"S" + std::to_string(++seats_made_)}, amount_cents, "hmac");
  return payment_no;
}

std::vector<std::string> BillWorld::outcomes(std::int64_t run_id, const std::string& payment_no,
                                             const std::string& kind) {
  pqxx::work tx(stores_->pg());
  std::vector<std::string> out;
  for (const auto& row : tx.exec_params(
           "SELECT outcome FROM bill_item WHERE run_id = $1 AND payment_no = $2 AND kind = $3 "
           "ORDER BY seq",
           run_id, payment_no, kind)) {
    out.push_back(row[0].as<std::string>());
  }
  return out;
}

int BillWorld::discrepancies(const std::string& payment_no, const std::string& kind) {
  pqxx::work tx(stores_->pg());
  return tx
      .exec_params1("SELECT count(*) FROM payment_discrepancy WHERE payment_no = $1 AND kind = $2",
                    payment_no, kind)[0]
      .as<int>();
}

std::int64_t BillWorld::scalar(const std::string& sql) {
  pqxx::work tx(stores_->pg());
  return tx.exec1(sql)[0].as<std::int64_t>();
}

channels::HmacBillEntry bill_payment(const std::string& trade, const std::string& payment_no,
                                     std::int64_t amount_cents, std::int64_t at_ms) {
  return {trade, payment_no, channels::BillRowKind::payment, amount_cents, at_ms};
}

channels::HmacBillEntry bill_refund(const std::string& trade, const std::string& payment_no,
                                    std::int64_t amount_cents, std::int64_t at_ms) {
  return {trade, payment_no, channels::BillRowKind::refund, amount_cents, at_ms};
}

EnvOverrides bill_cli_env(const PrivateDatabase& db, const std::string& gateway_url) {
  return {{"SEATFLOW_PROFILE", "dev"},
          {"SEATFLOW_PG_DSN", db.dsn()},
          {"SEATFLOW_REDIS_URL", test_redis_url()},
          {"SEATFLOW_CALLBACK_SECRETS", kBillSecret},
          {"SEATFLOW_HMAC_GATEWAY_URL", gateway_url},
          {"SEATFLOW_LOG_LEVEL", "warn"}};
}

}  // namespace seatflow::testing

// The payment-event outbox end to end with the real binary: `kill -9` of the engine in the middle
// of a relay batch loses no event (the repeats carry the same event id), retention keeps callbacks
// working, `seatflow events tail` prints the stream as JSON lines, a slot dropped under the engine
// is reported and measured until it is made again, and an engine on a PostgreSQL without
// wal_level=logical refuses to start with one line naming the setting.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "persistence/jobs/event_relay.hpp"
#include "support/engine_fixture.hpp"
#include "support/pg_server.hpp"
#include "support/stores.hpp"
#include "support/streams.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

// The events the database's slot has not confirmed, once no relay streams the slot (a killed
// engine's walsender may hold it a moment longer: the peek waits for it).
std::size_t unpublished(Stores& s, const PrivateDatabase& db) {
  for (int i = 0;; ++i) {
    try {
      return peek_events(s.pg(), db.slot()).size();
    } catch (const pqxx::sql_error&) {
      if (i >= 100) {
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

// Whether the slot's confirmed point reached `lsn` (pg_lsn text): readable while the engine's
// relay streams the slot, which a peek is not.
bool confirmed_past(Stores& s, const PrivateDatabase& db, const std::string& lsn) {
  pqxx::nontransaction tx(s.pg());
  return tx
      .exec_params1(
          "SELECT COALESCE(confirmed_flush_lsn >= $2::pg_lsn, false) "
          "FROM pg_replication_slots WHERE slot_name = $1",
          db.slot(), lsn)[0]
      .as<bool>();
}

std::string current_lsn(Stores& s) {
  pqxx::nontransaction tx(s.pg());
  return tx.exec1("SELECT pg_current_wal_lsn()::text")[0].as<std::string>();
}

// Polls `done` every 50 ms for up to `limit`; its last answer.
template <class Fn>
bool eventually(Fn done, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

std::vector<nlohmann::json> json_lines(const std::string& output) {
  std::vector<nlohmann::json> out;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.front() == '{') {
      out.push_back(nlohmann::json::parse(line));
    }
  }
  return out;
}

class PaymentEventsFunctionalTest : public ::testing::Test {
 protected:
  ~PaymentEventsFunctionalTest() override { (void)s_.redis().command({"DEL", stream_}); }

  EnvOverrides env(const std::string& batch, const std::string& failpoints = "") const {
    EnvOverrides out = {{"SEATFLOW_PG_DSN", db_.dsn()},
                        {"SEATFLOW_EVENT_RELAY", "on"},
                        {"SEATFLOW_EVENT_SLOT", db_.slot()},
                        {"SEATFLOW_EVENT_STREAM", stream_},
                        {"SEATFLOW_EVENT_RELAY_BATCH_EVENTS_MAX", batch},
                        {"SEATFLOW_EVENT_RELAY_INTERVAL_MS", "10"}};
    if (!failpoints.empty()) {
      out["SEATFLOW_FAILPOINTS"] = failpoints;
    }
    return out;
  }

  PrivateDatabase db_;
  Stores s_{db_.dsn()};
  std::string stream_ = "seatflow:events:" + s_.prefix();
};

TEST_F(PaymentEventsFunctionalTest, KillNineMidRelayLosesNoEventAndRepeatsCarryTheSameId) {
  constexpr int kPayments = 60;
  std::vector<std::string> payments;
  for (int i = 0; i < kPayments; ++i) {
    payments.push_back(s_.id("p" + std::to_string(i)));
    s_.create_pending(payments.back(), payments.back() + "-o", s_.id("show"),
                      {"s" + std::to_string(i)});
  }
  {
    // Ten events per batch and a second between each XADD and its mark: 120 events take twelve
    // seconds to publish, and a kill lands between an XADD and its mark.
    TestEngine engine(env("10", "relay_mark=delay:1000ms"));
    ASSERT_TRUE(engine.healthy());
    for (int i = 0; i < kPayments; ++i) {
      const auto reply =
          engine.notify(signed_body(s_.id("cb" + std::to_string(i)), payments[i], 1));
      ASSERT_EQ(reply.status, 200) << reply.body << reply.error;
    }
    ASSERT_TRUE(eventually([&] {
      return s_.redis().command({"XLEN", stream_}).integer >= 10;
    })) << engine.log();
    engine.process().signal(SIGKILL);
    EXPECT_EQ(engine.process().wait_exit(std::chrono::seconds(10)), 128 + SIGKILL);
  }
  const auto left = unpublished(s_, db_);
  ASSERT_GT(left, 0u) << "the kill came after the relay finished: nothing was tested";
  const auto before_restart = read_stream(s_.redis(), stream_).size();

  const auto written = current_lsn(s_);
  TestEngine engine(env("50"));
  ASSERT_TRUE(engine.healthy());
  ASSERT_TRUE(eventually([&] { return confirmed_past(s_, db_, written); })) << engine.log();

  const auto events = s_.all_events();
  ASSERT_EQ(events.size(), 2u * kPayments);
  const auto entries = read_stream(s_.redis(), stream_);
  std::map<std::string, const StreamEntry*> first;
  std::map<std::string, std::vector<std::string>> stream_order;
  std::size_t repeats = 0;
  for (const auto& entry : entries) {
    const auto& id = entry.fields.at("event_id");
    const auto [it, inserted] = first.emplace(id, &entry);
    if (!inserted) {
      ++repeats;
      EXPECT_EQ(it->second->fields, entry.fields) << "a repeat of " << id << " differs";
      continue;
    }
    stream_order[entry.fields.at("payment_no")].push_back(id);
  }
  std::map<std::string, std::vector<std::string>> outbox_order;
  for (const auto& event : events) {
    EXPECT_TRUE(first.count(event.event_id)) << "lost: " << event.event_id;
    outbox_order[event.payment_no].push_back(event.event_id);
  }
  EXPECT_EQ(first.size(), events.size());
  EXPECT_EQ(stream_order, outbox_order);  // each payment's events in the order they committed
  EXPECT_GE(entries.size(), before_restart + left);
  RecordProperty("repeated_entries", static_cast<int>(repeats));

  const auto metrics = engine.metrics();
  const auto published = metric_value(metrics, "seatflow_events_published_total");
  ASSERT_TRUE(published);
  EXPECT_GE(*published, static_cast<double>(left));
  EXPECT_TRUE(metric_value(metrics, "seatflow_event_relay_lag_seconds").has_value());

  // The example consumer prints every entry as one JSON line; --from starts after an id.
  const EnvOverrides tail_env = {{"SEATFLOW_REDIS_URL", test_redis_url()},
                                 {"SEATFLOW_EVENT_STREAM", stream_}};
  const auto all = run_to_exit({"events", "tail", "--once"}, tail_env);
  ASSERT_EQ(all.exit_code, 0) << all.output;
  const auto lines = json_lines(all.output);
  ASSERT_EQ(lines.size(), entries.size());
  EXPECT_EQ(lines[0]["stream_id"], entries[0].stream_id);
  EXPECT_EQ(lines[0]["event_id"], entries[0].fields.at("event_id"));
  EXPECT_TRUE(lines[0]["amount_cents"].is_number_integer());
  const auto after =
      run_to_exit({"events", "tail", "--once", "--from", entries[4].stream_id}, tail_env);
  ASSERT_EQ(after.exit_code, 0) << after.output;
  const auto rest = json_lines(after.output);
  ASSERT_EQ(rest.size(), entries.size() - 5);
  EXPECT_EQ(rest[0]["stream_id"], entries[5].stream_id);
  const auto three = run_to_exit({"events", "tail", "--count", "3"}, tail_env);
  ASSERT_EQ(three.exit_code, 0) << three.output;
  EXPECT_EQ(json_lines(three.output).size(), 3u);
}

TEST_F(PaymentEventsFunctionalTest, TailWaitsForNewEventsAndStopsOnSigint) {
  // The stream is the test's own and empty, so "from 0" sees the entry however late the tail
  // connects.
  EngineProcess tail({"events", "tail", "--from", "0"}, {{"SEATFLOW_REDIS_URL", test_redis_url()},
                                                         {"SEATFLOW_EVENT_STREAM", stream_}});
  ASSERT_TRUE(tail.started());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(tail.running()) << "the tail must wait while the stream is empty: " << tail.log();
  const auto added = s_.redis().command(
      {"XADD", stream_, "*", "event_id", "payment.failed:x", "type", "payment.failed"});
  ASSERT_TRUE(added.ok) << added.error;
  ASSERT_TRUE(eventually([&] { return tail.log().find("payment.failed:x") != std::string::npos; },
                         std::chrono::seconds(10)))
      << tail.log();
  tail.signal(SIGINT);
  EXPECT_EQ(tail.wait_exit(std::chrono::seconds(5)), 0) << tail.log();
}

// Retention with a horizon of seconds runs in the engine; callbacks keep working, and a copy of
// a callback whose log row it removed is still answered with the ACK and changes nothing.
TEST_F(PaymentEventsFunctionalTest, RetentionInTheEngineKeepsCallbacksWorking) {
  const auto p = s_.id("p");
  s_.create_pending(p, p + "-o", s_.id("show"), {"A1"});
  auto settings = env("50");
  settings["SEATFLOW_RETENTION"] = "on";
  settings["SEATFLOW_RETENTION_HORIZON"] = "1s";
  settings["SEATFLOW_RETENTION_INTERVAL_MS"] = "100";
  settings["SEATFLOW_MEMORY_DUPLICATES"] = "off";  // the copy must reach the database
  TestEngine engine(settings);
  ASSERT_TRUE(engine.healthy());
  const auto body = signed_body(s_.id("cb"), p, 1);
  ASSERT_EQ(engine.notify(body).status, 200);
  ASSERT_TRUE(eventually([&] { return s_.log_rows_for_payment(p) == 0; })) << engine.log();
  const auto again = engine.notify(signed_body(s_.id("cb"), p, 1));
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.body, "success");
  EXPECT_EQ(s_.payment_status(p), 1);
  EXPECT_EQ(s_.seat(s_.id("show"), "A1"), "2:" + p + "-o");
  EXPECT_EQ(s_.events(p, p + "-o").size(), 2u) << "the copy wrote an event";
}

// The slot dropped under a running engine (what a failover to a standby looks like: PostgreSQL 15
// gives the promoted server no slot): the relay makes it again on its next poll, logs
// event=event_slot_created (the old slot's unpublished events are lost), counts it in
// seatflow_event_slots_created_total (the alert SeatFlowEventSlotRemade), and the engine is ready
// again; a callback after that is applied with its events on the stream.
TEST_F(PaymentEventsFunctionalTest, ADroppedSlotIsMadeAgainByTheRelayAndCounted) {
  TestEngine engine(env("50"));
  ASSERT_TRUE(engine.healthy());
  const auto metric = [&](const std::string& name) {
    return metric_value(engine.get("/metrics").body, name).value_or(-1);
  };
  ASSERT_TRUE(eventually([&] { return engine.get("/readyz").status == 200; })) << engine.log();
  EXPECT_EQ(metric("seatflow_event_slot_state{state=\"ok\"}"), 1);
  EXPECT_EQ(metric("seatflow_event_slots_created_total"), 0);
  EXPECT_EQ(metric("seatflow_event_streams_taken_back_total"), 0);
  const auto slot_made_after = [&](const std::string& lsn) {
    pqxx::nontransaction tx(s_.pg());
    return tx.exec_params1(
                 "SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1 "
                 "AND restart_lsn >= $2::pg_lsn",
                 db_.slot(), lsn)[0]
               .as<int>() == 1;
  };

  // The relay's walsender holds the slot: end it and drop the slot before the relay is back.
  const auto dropped_at = current_lsn(s_);
  ASSERT_TRUE(eventually([&] {
    try {
      pqxx::nontransaction tx(s_.pg());
      tx.exec_params(
          "SELECT pg_terminate_backend(active_pid, 5000) FROM pg_replication_slots "
          "WHERE slot_name = $1 AND active_pid IS NOT NULL",
          db_.slot());
      tx.exec_params("SELECT pg_drop_replication_slot($1)", db_.slot());
      return true;
    } catch (const pqxx::sql_error&) {
      return false;  // active again: the relay reconnected first
    }
  }));
  ASSERT_TRUE(eventually([&] { return metric("seatflow_event_slots_created_total") == 1; }))
      << engine.log();
  EXPECT_TRUE(slot_made_after(dropped_at)) << "the slot is not a new one";
  EXPECT_NE(engine.log().find("event=event_slot_created"), std::string::npos) << engine.log();
  ASSERT_TRUE(eventually([&] { return engine.get("/readyz").status == 200; }))
      << engine.get("/readyz").body;
  EXPECT_EQ(metric("seatflow_event_slot_state{state=\"ok\"}"), 1);

  const auto p = s_.id("p");
  const auto order = p + "-o";
  s_.create_pending(p, order, s_.id("show"), {"A1"});
  const auto applied = engine.notify(signed_body(s_.id("cb"), p, 1));
  EXPECT_EQ(applied.status, 200) << applied.body << engine.log();
  EXPECT_EQ(s_.payment_status(p), 1);
  EXPECT_EQ(s_.seat(s_.id("show"), "A1"), "2:" + order);
  const auto published = [&](const std::string& event_id) {
    for (const auto& entry : read_stream(s_.redis(), stream_)) {
      const auto id = entry.fields.find("event_id");
      if (id != entry.fields.end() && id->second == event_id) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(eventually([&] {
    return published("payment.succeeded:" + p) && published("order.paid:" + order);
  })) << engine.log();
  EXPECT_EQ(metric("seatflow_event_slots_created_total"), 1);
}

// While the slot is missing and nothing makes it (here: no relay runs), a callback is answered
// 503 and changes nothing: its move's event would never be read (migration 11's guard). Once the
// slot is made (what `seatflow migrate` does), the gateway's resend is applied and its events are
// in the slot.
TEST_F(PaymentEventsFunctionalTest, WhileTheSlotIsMissingNoPaymentMoves) {
  auto settings = env("50");
  settings["SEATFLOW_EVENT_RELAY"] = "off";
  TestEngine engine(settings);
  ASSERT_TRUE(engine.healthy());
  {
    pqxx::nontransaction tx(s_.pg());
    tx.exec_params("SELECT pg_drop_replication_slot($1)", db_.slot());
  }
  const auto p = s_.id("p");
  const auto order = p + "-o";
  s_.create_pending(p, order, s_.id("show"), {"A1"});
  const auto refused = engine.notify(signed_body(s_.id("cb"), p, 1));
  EXPECT_EQ(refused.status, 503) << refused.body << engine.log();
  EXPECT_EQ(s_.payment_status(p), 0);
  EXPECT_EQ(s_.order_status(order), 0);
  EXPECT_FALSE(s_.log_row(s_.id("cb"))) << "a refused callback left a log row";
  EXPECT_EQ(s_.seat(s_.id("show"), "A1"), "1:" + order);

  EXPECT_EQ(persistence::ensure_event_slot(s_.pg(), db_.slot(), nullptr),
            persistence::SlotCheck::created);
  const auto resent = engine.notify(signed_body(s_.id("cb"), p, 1));
  EXPECT_EQ(resent.status, 200) << resent.body << engine.log();
  EXPECT_EQ(s_.payment_status(p), 1);
  EXPECT_EQ(s_.seat(s_.id("show"), "A1"), "2:" + order);
  std::vector<std::string> ids;
  for (const auto& event : peek_events(s_.pg(), db_.slot())) {
    ids.push_back(event.event_id);
  }
  EXPECT_NE(std::find(ids.begin(), ids.end(), "payment.succeeded:" + p), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "order.paid:" + order), ids.end());
}

// SeatFlow reads its events from the WAL: against a PostgreSQL with wal_level=replica the engine
// refuses to start, with exit code 2 and one line that names the setting.
TEST(EventSlotFunctionalTest, AnEngineOnAServerWithoutLogicalWalRefusesToStart) {
  PgServer server;
  ASSERT_TRUE(server.start({"wal_level=replica"}));
  const auto run = run_to_exit({"serve"}, {{"SEATFLOW_PG_DSN", server.dsn()},
                                           {"SEATFLOW_REDIS_URL", test_redis_url()},
                                           {"SEATFLOW_HTTP_ADDR", "127.0.0.1:0"}});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  std::size_t lines = 0;
  std::istringstream in(run.output);
  for (std::string line; std::getline(in, line);) {
    if (line.find("setting=wal_level") != std::string::npos) {
      ++lines;
      EXPECT_NE(line.find("event=startup_refused"), std::string::npos) << line;
      EXPECT_NE(line.find("value=replica"), std::string::npos) << line;
      EXPECT_NE(line.find("wal_level = logical"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(lines, 1u) << run.output;
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing

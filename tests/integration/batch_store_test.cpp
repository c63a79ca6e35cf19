// Group commit: a batch of callbacks for different payments gives each callback exactly the
// outcome and the effects it would have had alone, and a mark_sold failure undoes only its own.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "http/status.hpp"
#include "persistence/stores/batch_store.hpp"
#include "persistence/stores/callback_store.hpp"
#include "persistence/stores/sql.hpp"
#include "support/failpoints.hpp"
#include "support/plan_tree.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using domain::CallbackKind;
using domain::CallbackResult;
using testing::make_callback;

class BatchStoreTest : public ::testing::Test {
 protected:
  BatchStoreTest()
      : pg_(testing::test_pg_dsn(), 5000, &failpoints_, &persistence::prepare_statements),
        redis_(testing::test_redis_endpoint(), 2000, &failpoints_),
        seats_(redis_),
        single_(pg_, seats_, &failpoints_, &http::callback_status),
        batch_(pg_, redis_, &failpoints_, &http::callback_status) {}

  std::string pending(const std::string& name) {
    const auto payment = s_.id(name);
    s_.create_pending(payment, s_.id(name + "-o"), s_.id("show"), {name + "-1", name + "-2"});
    return payment;
  }

  // A pending payment paid by its first callback, `<name>-cb`; later copies are duplicates.
  std::string paid(const std::string& name) {
    const auto payment = pending(name);
    EXPECT_EQ(
        single_.process(make_callback(s_.id(name + "-cb"), payment, CallbackKind::success)).result,
        CallbackResult::applied);
    return payment;
  }

  testing::Stores s_;
  persistence::Failpoints failpoints_;
  persistence::PgSession pg_;
  persistence::RedisClient redis_;
  persistence::SeatStore seats_;
  persistence::CallbackStore single_;
  persistence::BatchCallbackStore batch_;
};

// The warm-up before an actor's first batch runs the callback path on nothing in a transaction
// that rolls back: the session is connected and nothing changes; a store that cannot be reached
// makes it fail quietly, and the batches after it work either way.
TEST_F(BatchStoreTest, AWarmUpConnectsAndChangesNothing) {
  const auto payment = pending("warm");
  ASSERT_FALSE(pg_.connected());
  EXPECT_TRUE(batch_.warm_up());
  EXPECT_TRUE(pg_.connected());
  EXPECT_EQ(s_.payment_status(payment), 0);
  EXPECT_EQ(s_.order_status(s_.id("warm-o")), 0);
  EXPECT_EQ(s_.log_rows_for_payment(payment), 0);
  EXPECT_TRUE(s_.all_events().empty());
  const auto outcomes =
      batch_.process({make_callback(s_.id("warm-cb"), payment, CallbackKind::success)});
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].result, CallbackResult::applied);
  EXPECT_EQ(s_.payment_status(payment), 1);

  pg_.reset();
  failpoints_ = testing::failpoints("pg_connect=error");
  EXPECT_FALSE(batch_.warm_up());
  EXPECT_FALSE(pg_.connected());
  failpoints_ = persistence::Failpoints();
  const auto other = pending("warm2");
  EXPECT_EQ(
      batch_.process({make_callback(s_.id("warm2-cb"), other, CallbackKind::success)})[0].result,
      CallbackResult::applied);
}

// The warm-up runs the lock and move statements on keys no row has, as often as PostgreSQL plans a
// prepared statement for its arguments before it settles on the generic plan: the session's
// first batches then plan nothing. Read from pg_prepared_statements of the same session.
TEST_F(BatchStoreTest, AWarmUpLeavesTheBatchStatementsOnTheirGenericPlans) {
  ASSERT_TRUE(batch_.warm_up());
  const auto plans = [this](const char* name) {
    pqxx::nontransaction tx(pg_.connection());
    const auto row = tx.exec_params1(
        "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1", name);
    return std::pair{row[0].as<std::int64_t>(), row[1].as<std::int64_t>()};
  };
  for (const char* name : {"batch_lock_payments_and_orders", "batch_move_succeeded_and_paid"}) {
    const auto [generic, custom] = plans(name);
    EXPECT_EQ(custom, 5) << name;
    EXPECT_GE(generic, 1) << name;
  }
  const auto [generic_before, custom_before] = plans("batch_lock_payments_and_orders");
  const auto payment = pending("generic");
  ASSERT_EQ(batch_.process({make_callback(s_.id("generic-cb"), payment, CallbackKind::success)})[0]
                .result,
            CallbackResult::applied);
  const auto [generic_after, custom_after] = plans("batch_lock_payments_and_orders");
  EXPECT_EQ(custom_after, custom_before);
  EXPECT_EQ(generic_after, generic_before + 1);
}

// Log rows are locked in callback_id order by the duplicate flush (whatever order its counts come
// in) and by a batch's upsert (whatever order its callbacks come in): in different orders the two
// deadlocked under a storm. Another transaction holds the later row; the flush or batch, blocked
// on it, must already hold the earlier one.
class LogLockOrderTest : public BatchStoreTest {
 protected:
  LogLockOrderTest() : first_(s_.id("cb-a")), second_(s_.id("cb-b")) {
    pay_a_ = pending("a");
    pay_b_ = pending("b");
    // The later id's row is written first, so neither its place in the table nor the input's
    // order puts the earlier row first.
    EXPECT_EQ(batch_.process({make_callback(second_, pay_b_, CallbackKind::success)}).size(), 1u);
    EXPECT_EQ(batch_.process({make_callback(first_, pay_a_, CallbackKind::success)}).size(), 1u);
  }

  // Runs `work` on pg_ while another transaction holds the later row; true when `work`, waiting
  // for that row, held the earlier one.
  template <class Work>
  bool held_the_earlier_row_while_waiting(Work work) {
    const int pid = pg_.connection().backendpid();
    pqxx::connection holder_conn(testing::test_pg_dsn());
    pqxx::work holder(holder_conn);
    holder.exec_params("SELECT 1 FROM payment_callback_log WHERE callback_id = $1 FOR UPDATE",
                       second_);
    auto running = std::async(std::launch::async, work);
    pqxx::connection probe_conn(testing::test_pg_dsn());
    bool blocked = false;
    for (int i = 0; i < 500 && !blocked; ++i) {
      pqxx::nontransaction q(probe_conn);
      blocked = q.exec_params1(
                     "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 "
                     "AND wait_event_type = 'Lock'",
                     pid)[0]
                    .as<int>() > 0;
      if (!blocked) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    EXPECT_TRUE(blocked) << "never waited for the held row";
    bool earlier_held = false;
    {
      pqxx::work probe(probe_conn);
      try {
        probe.exec_params(
            "SELECT 1 FROM payment_callback_log WHERE callback_id = $1 FOR UPDATE NOWAIT", first_);
      } catch (const pqxx::sql_error&) {
        earlier_held = true;
      }
    }
    holder.commit();
    running.get();
    return earlier_held;
  }

  std::string first_;
  std::string second_;
  std::string pay_a_;
  std::string pay_b_;
};

TEST_F(LogLockOrderTest, DuplicateFlushLocksInCallbackIdOrder) {
  ASSERT_LT(first_, second_);
  bool flushed = false;
  EXPECT_TRUE(held_the_earlier_row_while_waiting([&] {
    flushed = batch_.flush_duplicates({{second_, pay_b_, 2}, {first_, pay_a_, 3}}, {}).outcome ==
              persistence::FlushOutcome::committed;
  }));
  EXPECT_TRUE(flushed);
  EXPECT_EQ(s_.log_row(first_)->duplicate_count, 3);
  EXPECT_EQ(s_.log_row(second_)->duplicate_count, 2);
}

TEST_F(LogLockOrderTest, BatchUpsertsInCallbackIdOrder) {
  std::vector<domain::CallbackOutcome> outcomes;
  EXPECT_TRUE(held_the_earlier_row_while_waiting([&] {
    outcomes = batch_.process({make_callback(second_, pay_b_, CallbackKind::success),
                               make_callback(first_, pay_a_, CallbackKind::success)});
  }));
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].result, CallbackResult::duplicate);
  EXPECT_EQ(outcomes[1].result, CallbackResult::duplicate);
}

TEST_F(BatchStoreTest, EveryKindOfCallbackInOneBatch) {
  const auto paid = pending("paid");
  const auto failed = pending("failed");
  const auto again = pending("again");
  const auto cancelled = s_.id("cancelled");
  s_.create_order(s_.id("cancelled-o"), s_.id("show"), {"c-1"}, 5000, 2);
  s_.create_payment(cancelled, s_.id("cancelled-o"), "hmac", 5000, 3);
  ASSERT_EQ(single_.process(make_callback(s_.id("again-cb"), again, CallbackKind::success)).result,
            CallbackResult::applied);
  ASSERT_EQ(single_.process(make_callback(s_.id("reused"), failed, CallbackKind::failure)).result,
            CallbackResult::applied);
  const auto failed_2 = pending("failed2");

  const std::vector<domain::VerifiedCallback> batch = {
      make_callback(s_.id("paid-cb"), paid, CallbackKind::success),
      make_callback(s_.id("failed2-cb"), failed_2, CallbackKind::failure),
      make_callback(s_.id("again-cb"), again, CallbackKind::success),           // duplicate
      make_callback(s_.id("late"), cancelled, CallbackKind::success),           // discrepancy
      make_callback(s_.id("reused"), failed, CallbackKind::success),            // conflict
      make_callback(s_.id("ghost-cb"), s_.id("ghost"), CallbackKind::success),  // unknown
  };
  const auto outcomes = batch_.process(batch);
  ASSERT_EQ(outcomes.size(), batch.size());
  EXPECT_EQ(outcomes[0].result, CallbackResult::applied);
  EXPECT_EQ(outcomes[1].result, CallbackResult::applied);
  EXPECT_EQ(outcomes[2].result, CallbackResult::duplicate);
  EXPECT_EQ(outcomes[3].result, CallbackResult::discrepancy);
  EXPECT_EQ(outcomes[4].result, CallbackResult::conflict);
  EXPECT_EQ(outcomes[5].result, CallbackResult::unknown_payment);

  EXPECT_EQ(s_.payment_status(paid), 1);
  EXPECT_TRUE(s_.payment_paid_at_set(paid));
  EXPECT_EQ(s_.order_status(s_.id("paid-o")), 1);
  EXPECT_EQ(s_.seat(s_.id("show"), "paid-2"), "2:" + s_.id("paid-o"));
  EXPECT_EQ(s_.payment_status(failed_2), 2);
  EXPECT_EQ(s_.seat(s_.id("show"), "failed2-1"), "1:" + s_.id("failed2-o"));
  EXPECT_EQ(s_.log_row(s_.id("again-cb"))->duplicate_count, 1);
  EXPECT_EQ(s_.discrepancies(cancelled, "paid_after_cancel"), 1);
  EXPECT_EQ(s_.payment_status(failed), 2);
  EXPECT_EQ(s_.log_row(s_.id("reused"))->duplicate_count, 0);
  EXPECT_FALSE(s_.log_row(s_.id("ghost-cb")));
}

TEST_F(BatchStoreTest, AMarkSoldFailureUndoesOnlyItsOwnCallback) {
  const auto a = pending("a");
  const auto b = pending("b");
  const auto c = pending("c");
  s_.set_seat(s_.id("show"), "b-2", "2:someone-else");
  const auto outcomes = batch_.process({make_callback(s_.id("a-cb"), a, CallbackKind::success),
                                        make_callback(s_.id("b-cb"), b, CallbackKind::success),
                                        make_callback(s_.id("c-cb"), c, CallbackKind::success)});
  EXPECT_EQ(outcomes[0].result, CallbackResult::applied);
  EXPECT_EQ(outcomes[1].result, CallbackResult::mark_sold_failed);
  EXPECT_EQ(outcomes[2].result, CallbackResult::applied);
  EXPECT_EQ(s_.payment_status(a), 1);
  EXPECT_EQ(s_.payment_status(c), 1);
  EXPECT_EQ(s_.payment_status(b), 0);
  EXPECT_EQ(s_.order_status(s_.id("b-o")), 0);
  EXPECT_FALSE(s_.log_row(s_.id("b-cb")));
  EXPECT_EQ(s_.seat(s_.id("show"), "b-1"), "1:" + s_.id("b-o"));
  EXPECT_EQ(s_.log_row(s_.id("a-cb"))->duplicate_count, 0);
}

// A retryable error (here a statement timeout: another session holds one payment's row) answers the
// whole batch 503 at once: no callback of it is run again one by one, so the free payment beside
// the locked one is not applied either, and nothing of the batch is written.
TEST_F(BatchStoreTest, AStatementTimeoutAnswersTheWholeBatch503WithoutRunningItAgain) {
  const auto held = pending("held");
  const auto free = pending("free");
  persistence::PgSession short_pg(testing::test_pg_dsn(), 300, nullptr,
                                  &persistence::prepare_statements);
  persistence::BatchCallbackStore batch(short_pg, redis_, nullptr, &http::callback_status);
  pqxx::connection other(testing::test_pg_dsn());
  pqxx::work holder(other);
  holder.exec_params("SELECT 1 FROM payment_order WHERE payment_no = $1 FOR UPDATE", held);
  const auto outcomes =
      batch.process({make_callback(s_.id("held-cb"), held, CallbackKind::success),
                     make_callback(s_.id("free-cb"), free, CallbackKind::success)});
  holder.abort();
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].result, CallbackResult::unavailable);
  EXPECT_EQ(outcomes[1].result, CallbackResult::unavailable);
  EXPECT_EQ(s_.payment_status(free), 0);
  EXPECT_FALSE(s_.log_row(s_.id("free-cb")));
  EXPECT_FALSE(s_.log_row(s_.id("held-cb")));
}

// A callback whose deadline has passed is never run, whatever batch it is in; its neighbours are.
TEST_F(BatchStoreTest, ACallbackPastItsDeadlineIsNeverRun) {
  const auto late = pending("late");
  const auto on_time = pending("on-time");
  const auto now = std::chrono::steady_clock::now();
  const auto outcomes =
      batch_.process({make_callback(s_.id("late-cb"), late, CallbackKind::success),
                      make_callback(s_.id("on-time-cb"), on_time, CallbackKind::success)},
                     {now - std::chrono::milliseconds(1), now + std::chrono::seconds(30)});
  EXPECT_EQ(outcomes[0].result, CallbackResult::unavailable);
  EXPECT_EQ(outcomes[0].detail, "deadline passed");
  EXPECT_EQ(outcomes[1].result, CallbackResult::applied);
  EXPECT_EQ(s_.payment_status(late), 0);
  EXPECT_FALSE(s_.log_row(s_.id("late-cb")));
  EXPECT_EQ(s_.payment_status(on_time), 1);
}

TEST_F(BatchStoreTest, ATradeNumberConflictFallsBackToOneByOne) {
  s_.create_pending(s_.id("x"), s_.id("x-o"), s_.id("show"), {"x-1"}, 100, "alipay");
  s_.create_pending(s_.id("y"), s_.id("y-o"), s_.id("show"), {"y-1"}, 100, "alipay");
  const auto trade = s_.id("trade");
  const auto outcomes =
      batch_.process({make_callback(s_.id("x-cb"), s_.id("x"), CallbackKind::success, 100, trade,
                                    domain::Channel::alipay),
                      make_callback(s_.id("y-cb"), s_.id("y"), CallbackKind::success, 100, trade,
                                    domain::Channel::alipay)});
  EXPECT_EQ(outcomes[0].result, CallbackResult::applied);
  EXPECT_EQ(outcomes[1].result, CallbackResult::conflict);
  EXPECT_EQ(s_.payment_status(s_.id("x")), 1);
  EXPECT_EQ(s_.payment_status(s_.id("y")), 0);
}

TEST_F(BatchStoreTest, CommitFailpointLeavesTheWholeBatchUndone) {
  const auto a = pending("a");
  const auto b = pending("b");
  failpoints_ = testing::failpoints("pg_commit=error");
  const auto outcomes = batch_.process({make_callback(s_.id("a-cb"), a, CallbackKind::success),
                                        make_callback(s_.id("b-cb"), b, CallbackKind::failure)});
  EXPECT_EQ(outcomes[0].result, CallbackResult::unavailable);
  EXPECT_EQ(outcomes[1].result, CallbackResult::unavailable);
  EXPECT_EQ(s_.payment_status(a), 0);
  EXPECT_EQ(s_.payment_status(b), 0);
  EXPECT_FALSE(s_.log_row(s_.id("a-cb")));
}

// The mark_sold failpoint on the group-commit path: the failed sale is undone (log row included),
// the other callback of the batch commits.
TEST_F(BatchStoreTest, MarkSoldFailpointUndoesOnlyTheSale) {
  const auto a = pending("a");
  const auto b = pending("b");
  failpoints_ = testing::failpoints("mark_sold=error");
  const auto outcomes = batch_.process({make_callback(s_.id("a-cb"), a, CallbackKind::success),
                                        make_callback(s_.id("b-cb"), b, CallbackKind::failure)});
  EXPECT_EQ(outcomes[0].result, CallbackResult::mark_sold_failed);
  EXPECT_EQ(outcomes[1].result, CallbackResult::applied);
  EXPECT_GE(failpoints_.hits(persistence::FailpointId::mark_sold), 1u);
  EXPECT_EQ(s_.payment_status(a), 0);
  EXPECT_EQ(s_.order_status(s_.id("a-o")), 0);
  EXPECT_FALSE(s_.log_row(s_.id("a-cb")));
  EXPECT_EQ(s_.seat(s_.id("show"), "a-1"), "1:" + s_.id("a-o"));
  EXPECT_EQ(s_.payment_status(b), 2);
}

// Regression: after a database restart the flush failed on the stale connection and waited for
// the next interval (once per persistence actor); it now retries once on a fresh connection.
TEST_F(BatchStoreTest, FlushSurvivesABrokenConnection) {
  const auto a = paid("a");
  const auto backend = pg_.connection().backendpid();
  {
    pqxx::work tx(s_.pg());
    tx.exec_params("SELECT pg_terminate_backend($1)", backend);
    tx.commit();
  }
  EXPECT_EQ(batch_.flush_duplicates({{s_.id("a-cb"), a, 3}}, {}).outcome,
            persistence::FlushOutcome::committed);
  EXPECT_EQ(s_.log_row(s_.id("a-cb"))->duplicate_count, 3);
}

// A flush whose COMMIT went through but whose answer was lost (a connection cut or black-holed
// mid-commit; flush_commit_unknown) is in doubt: its counts come back with its transaction id, and
// the next flush asks PostgreSQL before adding them. Regression: the flusher kept an in-doubt
// flush's counts and wrote them again, counting each duplicate twice (chaos, "pg black-holed 3s": a
// callback id counted 7 times after 5 requests).
TEST_F(BatchStoreTest, AFlushWhoseCommitIsInDoubtIsCountedOnce) {
  const auto a = paid("a");
  failpoints_ = testing::failpoints("flush_commit_unknown=error");
  const auto doubted = batch_.flush_duplicates({{s_.id("a-cb"), a, 2}}, {});
  failpoints_ = persistence::Failpoints();
  ASSERT_EQ(doubted.outcome, persistence::FlushOutcome::in_doubt);
  ASSERT_EQ(doubted.doubtful.size(), 1u);
  EXPECT_EQ(s_.log_row(s_.id("a-cb"))->duplicate_count, 2);  // it did commit
  const auto next = batch_.flush_duplicates({{s_.id("a-cb"), a, 1}}, {}, doubted.doubtful);
  EXPECT_EQ(next.outcome, persistence::FlushOutcome::committed);
  EXPECT_TRUE(next.doubtful.empty());
  EXPECT_EQ(s_.log_row(s_.id("a-cb"))->duplicate_count, 3);
}

// The other two ways a doubt ends: a transaction still running stays in doubt and adds nothing;
// once PostgreSQL has aborted it, its counts are added (once, merged with the flush's own).
TEST_F(BatchStoreTest, AnAbortedFlushInDoubtIsAddedAndARunningOneWaits) {
  const auto a = paid("a");
  pqxx::connection other(testing::test_pg_dsn());
  auto running = std::make_unique<pqxx::work>(other);
  const auto xid = running->exec("SELECT pg_current_xact_id()::text")[0][0].as<std::string>();
  const std::vector<persistence::DoubtfulFlush> doubtful = {{xid, {{s_.id("a-cb"), a, 4}}}};

  const auto waiting = batch_.flush_duplicates({}, {}, doubtful);
  EXPECT_EQ(waiting.outcome, persistence::FlushOutcome::committed);
  ASSERT_EQ(waiting.doubtful.size(), 1u);
  EXPECT_EQ(waiting.doubtful[0].xid, xid);
  EXPECT_EQ(s_.log_row(s_.id("a-cb"))->duplicate_count, 0);

  running->abort();
  const auto settled = batch_.flush_duplicates({{s_.id("a-cb"), a, 1}}, {}, waiting.doubtful);
  EXPECT_EQ(settled.outcome, persistence::FlushOutcome::committed);
  EXPECT_TRUE(settled.doubtful.empty());
  EXPECT_EQ(s_.log_row(s_.id("a-cb"))->duplicate_count, 5);
}

// A flush that fails before its commit wrote nothing: the doubts it was given come back as given.
TEST_F(BatchStoreTest, AFailedFlushReturnsItsDoubtsUnsettled) {
  const auto a = paid("a");
  const std::vector<persistence::DoubtfulFlush> doubtful = {{"1", {{s_.id("a-cb"), a, 4}}}};
  failpoints_ = testing::failpoints("pg_commit=error");
  const auto failed = batch_.flush_duplicates({{s_.id("a-cb"), a, 1}}, {}, doubtful);
  failpoints_ = persistence::Failpoints();
  EXPECT_EQ(failed.outcome, persistence::FlushOutcome::failed);
  ASSERT_EQ(failed.doubtful.size(), 1u);
  EXPECT_EQ(failed.doubtful[0].xid, "1");
  EXPECT_EQ(s_.log_row(s_.id("a-cb"))->duplicate_count, 0);
}

TEST_F(BatchStoreTest, FlushAddsCountsAndHealsPaidOrders) {
  const auto a = paid("a");
  s_.set_seat(s_.id("show"), "a-1", "1:" + s_.id("a-o"));
  const auto b = pending("b");  // not paid: must not be sold by a heal
  ASSERT_EQ(batch_.flush_duplicates({{s_.id("a-cb"), a, 7}}, {a, b}).outcome,
            persistence::FlushOutcome::committed);
  EXPECT_EQ(s_.log_row(s_.id("a-cb"))->duplicate_count, 7);
  EXPECT_EQ(s_.seat(s_.id("show"), "a-1"), "2:" + s_.id("a-o"));
  EXPECT_EQ(s_.seat(s_.id("show"), "b-1"), "1:" + s_.id("b-o"));
}

TEST_F(BatchStoreTest, LostScriptCacheIsReloadedAndTheBatchStillSells) {
  const auto first = pending("first");
  const auto second = pending("second");
  // The server forgets every loaded script (as after a restart); the pipelined EVALSHA answers
  // NOSCRIPT, the store loads mark_sold again and re-sends the pipeline.
  ASSERT_TRUE(s_.redis().command({"SCRIPT", "FLUSH"}).ok);
  const auto outcomes =
      batch_.process({make_callback(s_.id("first-cb"), first, CallbackKind::success),
                      make_callback(s_.id("second-cb"), second, CallbackKind::success)});
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].result, CallbackResult::applied);
  EXPECT_EQ(outcomes[1].result, CallbackResult::applied);
  EXPECT_EQ(s_.seat(s_.id("show"), "first-1"), "2:" + s_.id("first-o"));
  EXPECT_EQ(s_.seat(s_.id("show"), "second-2"), "2:" + s_.id("second-o"));
  // eval_script reloads too.
  ASSERT_TRUE(s_.redis().command({"SCRIPT", "FLUSH"}).ok);
  const auto reply = redis_.eval_script("return 7", persistence::script_sha1("return 7"), {}, {});
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.integer, 7);
}

// Whether a plan tree reaches payment_order by its key (an index condition), rather than by
// reading the table or the whole of an index.
bool payments_by_key(const nlohmann::json& plan) {
  return testing::any_plan_node(plan, [](const nlohmann::json& node) {
    return node.value("Relation Name", "") == "payment_order" && node.contains("Index Cond");
  });
}

// Loads `count` pending payments and their orders ('bulk-p<n>', 'bulk-o<n>') without ANALYZE:
// a bulk load, which invalidates no cached plan.
void bulk_load_payments(const std::string& dsn, int count) {
  pqxx::connection loader(dsn);
  pqxx::nontransaction tx(loader);
  tx.exec_params(
      "INSERT INTO order_info (order_no, user_id, show_id, seat_ids, amount_cents, status, "
      "  expires_at) "
      "SELECT 'bulk-o' || g, 'u', 'bulk-show', ARRAY['s' || g], 5000, 0, "
      "  now() + interval '15 minutes' FROM generate_series(1, $1) g",
      count);
  tx.exec_params(
      "INSERT INTO payment_order (payment_no, order_no, channel, amount_cents, status) "
      "SELECT 'bulk-p' || g, 'bulk-o' || g, 'hmac', 5000, 0 FROM generate_series(1, $1) g",
      count);
}

// A private database and one batch store on a session whose plans are refreshed every 100 ms.
class PlanRefreshTest : public ::testing::Test {
 protected:
  static persistence::PgLimits refreshed_limits() {
    persistence::PgLimits limits;
    limits.plan_refresh_ms = 100;
    return limits;
  }

  // The plan the session has cached for `execute` (an EXECUTE of one of its statements).
  nlohmann::json cached_plan(const std::string& execute) {
    pqxx::nontransaction tx(pg_.connection());
    const auto row = tx.exec1("EXPLAIN (FORMAT JSON) " + execute);
    return nlohmann::json::parse(row[0].as<std::string>()).at(0).at("Plan");
  }

  void wait_past_the_refresh() const {
    std::this_thread::sleep_for(std::chrono::milliseconds(limits_.plan_refresh_ms + 20));
  }

  testing::PrivateDatabase db_;
  persistence::Failpoints failpoints_;
  persistence::PgLimits limits_ = refreshed_limits();
  persistence::PgSession pg_{db_.dsn(), limits_, &failpoints_, nullptr,
                             &persistence::prepare_statements};
  persistence::RedisClient redis_{testing::test_redis_endpoint(), 2000, &failpoints_};
  persistence::BatchCallbackStore batch_{pg_, redis_, &failpoints_, &http::callback_status};
};

// A generic plan stays cached through a bulk load, which invalidates nothing. The warm-up's,
// made on empty tables, read the whole payment key index and every order for each batch: 123 ms
// a batch on 200 000 rows loaded without ANALYZE (500 callbacks/s). Past plan_refresh_ms, the next
// batch drops the session's plans, and its statements are planned on the tables as they are.
TEST_F(PlanRefreshTest, APlanMadeOnEmptyTablesIsMadeAgainAfterABulkLoad) {
  testing::Stores s(db_.dsn());
  ASSERT_TRUE(batch_.warm_up());
  bulk_load_payments(db_.dsn(), 50000);
  const std::string lock = "EXECUTE batch_lock_payments_and_orders('{bulk-p1}')";
  // The control: the plan the warm-up left is the one a batch would run now.
  EXPECT_FALSE(payments_by_key(cached_plan(lock))) << cached_plan(lock).dump();

  wait_past_the_refresh();
  const auto payment = s.id("refresh");
  s.create_pending(payment, s.id("refresh-o"), s.id("show"), {"r-1", "r-2"});
  ASSERT_EQ(
      batch_.process({make_callback(s.id("refresh-cb"), payment, CallbackKind::success)})[0].result,
      CallbackResult::applied);
  EXPECT_TRUE(payments_by_key(cached_plan(lock))) << cached_plan(lock).dump();
}

// The duplicate flush's self-heal reads payments and their orders by key too, in its own
// transaction: it refreshes the session's plans as the batch path does. Its generic plan, made
// on empty tables, is checked the same way.
TEST_F(PlanRefreshTest, TheDuplicateFlushRefreshesItsPlansAfterABulkLoad) {
  // Six heals of unknown payments on the empty tables: the statement is on its generic plan.
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(batch_.flush_duplicates({}, {"none-" + std::to_string(i)}).outcome,
              persistence::FlushOutcome::committed);
  }
  bulk_load_payments(db_.dsn(), 50000);
  const std::string heal = "EXECUTE batch_paid_orders_of('{bulk-p1}', 1, 1)";
  // The control: the plan the empty tables left is the one a heal would run now.
  EXPECT_FALSE(payments_by_key(cached_plan(heal))) << cached_plan(heal).dump();

  wait_past_the_refresh();
  ASSERT_EQ(batch_.flush_duplicates({}, {"none-after-the-load"}).outcome,
            persistence::FlushOutcome::committed);
  EXPECT_TRUE(payments_by_key(cached_plan(heal))) << cached_plan(heal).dump();
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow

// The router's passivation of payment actors, with an in-memory commit batcher and flusher (no
// store): an actor is forgotten once it reported idle for passivate_idle_ms with nothing forwarded
// since, whichever way its last callbacks were answered; it then waits as a spare for the next new
// payment, knowing nothing of its last one, or stops when the spares are full.
#include "actors/router.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

namespace seatflow::actors {
namespace {
namespace SEATFLOW_UNITY_ID {

using domain::CallbackKind;
using domain::CallbackResult;

constexpr auto kWaitLimit = std::chrono::seconds(30);

// Commits every callback at once with `result`, with no timers of its own. (Actors spawned from a
// function without arguments trip UBSan inside CAF 0.17's init_fun_factory: a null empty tuple is
// dereferenced.)
CommitBatcherActor::behavior_type instant_committer(CommitBatcherActor::pointer /*self*/,
                                                    CallbackResult result) {
  return {
      [result](PersistRequest&) {
        return domain::CallbackOutcome{result, {}};
      },
      [](fill_atom) {},
      [](deadline_atom) {},
  };
}

// Takes the ledger's wake-ups and writes nothing (the counts are not this test's subject); named
// for the reason above.
DuplicateFlusherActor::behavior_type idle_flusher(DuplicateFlusherActor::pointer /*self*/,
                                                  const std::string& /*name*/) {
  return {
      [](ledger_atom) {},
      [](flush_atom, bool) { return true; },
  };
}

domain::VerifiedCallback callback(const std::string& id, const std::string& payment_no = "P-1") {
  domain::VerifiedCallback out;
  out.callback_id = id;
  out.payment_no = payment_no;
  out.channel = domain::Channel::hmac;
  out.kind = CallbackKind::success;
  out.payload_sha256 = "digest-" + id;
  return out;
}

class RouterTest : public ::testing::Test {
 protected:
  RouterTest() : system_(config_) {
    links_.committer = system_.spawn(instant_committer, CallbackResult::applied);
    links_.flusher = system_.spawn(idle_flusher, std::string("flusher"));
    links_.memory_answers = std::make_shared<std::atomic<bool>>(true);
    links_.ledger = std::make_shared<DuplicateLedger>(1'000, links_.memory_answers);
    links_.settled = std::make_shared<SettledAnswers>();
    limits_.payment.passivate_idle_ms = 300;  // far above a send's round trip, even under TSan
  }
  ~RouterTest() override {
    if (router_) {
      caf::anon_send_exit(router_, caf::exit_reason::user_shutdown);
    }
    caf::anon_send_exit(links_.committer, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(links_.flusher, caf::exit_reason::user_shutdown);
  }

  // Sends `cb` through the router (spawned with limits_ at the first send); waits for the answer.
  CallbackResult send(const domain::VerifiedCallback& cb) {
    if (!router_) {
      router_ = system_.spawn(router_actor, links_, limits_, live_);
    }
    auto answered = std::make_shared<std::promise<CallbackResult>>();
    auto result = answered->get_future();
    caf::anon_send(router_, CallbackEnvelope{cb,
                                             [answered](const domain::CallbackOutcome& outcome) {
                                               answered->set_value(outcome.result);
                                             },
                                             std::chrono::steady_clock::now()});
    EXPECT_EQ(result.wait_for(kWaitLimit), std::future_status::ready);
    return result.get();
  }

  // Waits (bounded) until no payment actor is alive; the live count at the end.
  std::size_t await_no_actors() {
    const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
    while (live_->load() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return live_->load();
  }

  // Waits (bounded) until the actor system runs `count` actors; the count at the end.
  std::size_t await_running(std::size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
    while (system_.registry().running() != count && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return system_.registry().running();
  }

  caf::actor_system_config config_;
  caf::actor_system system_;
  PaymentActorLinks links_;
  RouterLimits limits_;
  std::shared_ptr<std::atomic<std::size_t>> live_ = std::make_shared<std::atomic<std::size_t>>(0);
  RouterActor router_;
};

TEST_F(RouterTest, AnIdleActorIsPassivated) {
  EXPECT_EQ(send(callback("cb-1")), CallbackResult::applied);
  EXPECT_EQ(live_->load(), 1u);
  EXPECT_EQ(await_no_actors(), 0u);
}

// Copies that reach the actor (sent before its answers were published) are answered from its
// memory, not through its queue: it must still tell the router, or the router, whose forwarded
// count moved past the actor's last idle report, never stops it.
TEST_F(RouterTest, AnActorWhoseLastCallbacksWereAnsweredFromItsMemoryIsPassivated) {
  EXPECT_EQ(send(callback("cb-1")), CallbackResult::applied);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(send(callback("cb-1")), CallbackResult::duplicate);
  }
  EXPECT_EQ(await_no_actors(), 0u);
}

// A passivated actor serves the next new payment instead of a new actor, and starts it knowing
// nothing of its last one: the same callback id and digest under another payment is applied, not
// answered from a memory the actor should have dropped.
TEST_F(RouterTest, ARetiredActorServesTheNextPaymentKnowingNothingOfItsLast) {
  EXPECT_EQ(send(callback("cb-1", "P-1")), CallbackResult::applied);
  EXPECT_EQ(await_no_actors(), 0u);
  EXPECT_EQ(links_.settled->size(), 0u);
  const auto running = system_.registry().running();
  EXPECT_EQ(send(callback("cb-1", "P-2")), CallbackResult::applied);
  EXPECT_EQ(live_->load(), 1u);
  EXPECT_EQ(system_.registry().running(), running);  // no actor spawned
  EXPECT_EQ(send(callback("cb-1", "P-2")), CallbackResult::duplicate);
  EXPECT_EQ(await_no_actors(), 0u);
  EXPECT_EQ(links_.settled->size(), 0u);
  EXPECT_EQ(await_running(running), running);  // retired again, not stopped
}

// With no room for spares, a passivated actor stops.
TEST_F(RouterTest, WithNoSparesAPassivatedActorStops) {
  limits_.spare_payment_actors_max = 0;
  EXPECT_EQ(send(callback("cb-1")), CallbackResult::applied);
  const auto running = system_.registry().running();
  EXPECT_EQ(await_no_actors(), 0u);
  EXPECT_EQ(await_running(running - 1), running - 1);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::actors

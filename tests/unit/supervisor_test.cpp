// Unit tests for the supervisor: a core actor that dies is reported once, a stop's exits are not.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/supervisor.hpp"

namespace seatflow::actors {
namespace {
namespace SEATFLOW_UNITY_ID {

// Takes an argument: CAF 0.17 spawns a function of no arguments through a null argument tuple,
// which UBSan reports as a null reference binding.
caf::behavior idle_actor(caf::event_based_actor* /*self*/, int /*unused*/) {
  return {
      [](count_atom) { return std::size_t{0}; },
  };
}

// The names reported, delivered through a promise (the supervisor runs on a scheduler thread).
struct Reports {
  std::promise<std::string> first;
};

TEST(Supervisor, ACoreActorKilledIsReportedByName) {
  caf::actor_system_config config;
  caf::actor_system system{config};
  auto reports = std::make_shared<Reports>();
  auto future = reports->first.get_future();
  const auto stopped = system.spawn(idle_actor, 0);
  const auto killed = system.spawn(idle_actor, 0);
  const auto supervisor = system.spawn(
      supervisor_actor, std::vector<SupervisedActor>{{stopped, "stopped"}, {killed, "killed"}},
      [reports](const std::string& actor, const std::string&) { reports->first.set_value(actor); });
  caf::anon_send_exit(stopped, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(killed, caf::exit_reason::kill);
  // A bound so a broken supervisor fails the test instead of hanging it, not a timing claim.
  ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(future.get(), "killed") << "a user_shutdown exit must not be reported";
  caf::anon_send_exit(supervisor, caf::exit_reason::user_shutdown);
}

TEST(Supervisor, AnswersHowManyActorsItWatches) {
  caf::actor_system_config config;
  caf::actor_system system{config};
  const auto a = system.spawn(idle_actor, 0);
  const auto b = system.spawn(idle_actor, 0);
  const auto supervisor = system.spawn(
      supervisor_actor, std::vector<SupervisedActor>{{a, "a"}, {b, "b"}}, CoreDownFn{});
  caf::scoped_actor self{system};
  std::size_t watched = 0;
  self->request(supervisor, caf::infinite, count_atom::value)
      .receive([&](std::size_t n) { watched = n; }, [](const caf::error&) {});
  EXPECT_EQ(watched, 2U);
  for (const auto& actor : {a, b}) {
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  }
  caf::anon_send_exit(supervisor, caf::exit_reason::user_shutdown);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::actors

// The bill actor (SPEC §13): a detached owner of one PostgreSQL session with the bill run's
// bounds, running the runs the API asks for and the daily schedule (SEATFLOW_BILL_RECON: at
// SEATFLOW_BILL_RECON_AT in SEATFLOW_BILL_TIMEZONE, yesterday's bill of every channel with a bill
// source; a run that is not done, a not_ready bill included, is tried again after
// SEATFLOW_BILL_RETRY_MS, at most kBillScheduleAttemptsMax times). Of several engines one runs a
// channel's day: the store opens one running run per channel and date. Its interface (BillActor:
// BillJob, bill_tick_atom) is in actors/messages.hpp.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/bill_runner.hpp"
#include "actors/messages.hpp"
#include "actors/persistence_actor.hpp"

namespace seatflow::actors {

// How often the schedule looks whether a day's bill is due.
inline constexpr std::uint32_t kBillTickMs = 60'000;

// The store settings of a bill run's session: its statement and call bounds cover a whole run (the
// COPY stays open while the gateway's pages arrive), and the server checks every
// kBillConnectionCheckMs that its client is still there (a stopped or killed engine leaves no
// statement running).
[[nodiscard]] StoreSettings bill_store_settings(StoreSettings store, const BillSettings& bill);

// Opens and runs one bill (the CLI and the actor): `opened` hears of the opening first.
[[nodiscard]] BillRunResult run_bill(BillRunner& runner, persistence::BillStore& store,
                                     domain::Channel channel, const std::string& date,
                                     const std::function<void(const BillRunResult&)>& opened);

struct BillState {
  static inline const char* name = "seatflow.bill";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::BillStore> store;
  std::shared_ptr<BillRunner> runner;
};

// BillActor: BillJob (answered with the run's end) and bill_tick_atom.
[[nodiscard]] BillActor::behavior_type bill_actor(BillActor::stateful_pointer<BillState> self,
                                                  StoreSettings settings,
                                                  std::shared_ptr<BillRunner> runner);

}  // namespace seatflow::actors

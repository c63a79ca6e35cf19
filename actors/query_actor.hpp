// The query scheduler (SPEC §10): a detached actor that takes the due rows of payment_query in
// bounded batches under a lease, asks each payment's gateway at most `rate_per_s` times a second
// per channel, runs paid/failed answers through the pipeline, and records the next step of the
// schedule (with jitter) in PostgreSQL, so a restart or a second engine neither loses nor doubles
// it. It also answers sync requests (POST /api/payments/{paymentNo}/sync).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/channel_tokens.hpp"
#include "actors/messages.hpp"
#include "actors/payment_querier.hpp"
#include "actors/persistence_actor.hpp"
#include "persistence/stores/query_store.hpp"

namespace seatflow::actors {

struct QuerySettings {
  bool enabled = true;  // SEATFLOW_QUERY
  // SEATFLOW_QUERY_SCHEDULE: the delay before each query, the first counted from the payment's
  // creation, each next one from the query before it.
  std::vector<std::uint32_t> schedule_ms = {60'000, 300'000, 300'000, 300'000, 300'000, 300'000};
  std::uint32_t rate_per_s = 20;  // SEATFLOW_QUERY_RATE_PER_S: queries per second per channel
  std::size_t batch = 50;         // due rows taken per tick
  std::uint32_t tick_ms = 1'000;  // how often due rows are looked for
  // A taken row's next_at moves this far ahead while it is being asked about; a crash mid-query
  // leaves it due again after that.
  std::uint32_t lease_ms = 60'000;
  std::uint32_t jitter_percent = 10;       // each next delay grows by a random 0..jitter %
  std::uint32_t rate_deferral_ms = 1'000;  // a row over the rate limit is due again after this
};

// The next delay after `attempts` queries (1 = the first was made), or nullopt when the schedule
// is done; `jitter_unit` in [0, 1) scales the settings' jitter.
[[nodiscard]] std::optional<std::uint32_t> next_query_delay_ms(const QuerySettings& settings,
                                                               int attempts, double jitter_unit);

struct QueryActorState {
  static inline const char* name = "seatflow.query";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::QueryStore> store;
  std::shared_ptr<PaymentQuerier> querier;
  std::optional<ChannelTokens> tokens;  // the settings' rate_per_s
  std::mt19937_64 rng{std::random_device{}()};
};

// QueryActor: query_tick_atom (sent only when the schedule is on) and SyncJob (answered with
// whether the payment is known and the query's run).
[[nodiscard]] QueryActor::behavior_type query_actor(
    QueryActor::stateful_pointer<QueryActorState> self, StoreSettings store, QuerySettings settings,
    std::shared_ptr<PaymentQuerier> querier);

}  // namespace seatflow::actors

// The load generator: keep-alive HTTP/1.1 connections with one request in flight each (Asio/Beast).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "load/plan.hpp"

namespace seatflow::bench {

struct ClientOptions {
  std::string host = "127.0.0.1";  // a loopback address (checked by the caller)
  std::uint16_t port = 8080;
  // More loopback targets (host, port): connection i goes to target i mod (1 + extra), so one plan
  // is spread over several engines that share PostgreSQL and Redis.
  std::vector<std::pair<std::string, std::uint16_t>> extra_targets;
  std::uint32_t connections = 64;
  double rate_per_s = 0;            // 0: closed loop; otherwise open loop at this request rate
  bool retry_503 = true;            // resend a 503 after retry_delay_ms
  std::uint32_t max_attempts = 20;  // per request, transport errors and 503s together
  std::uint32_t retry_delay_ms = 50;
  std::uint32_t connect_timeout_ms = 5000;
  // Each connection's own address (a loopback address, e.g. 127.0.0.2), so the engine or a
  // balancer in front of it sees this load as another source; empty: the kernel's choice.
  std::string source_address;
  std::uint32_t request_timeout_ms = 30000;
  std::uint32_t deadline_s = 300;     // the whole load stops here and reports failure
  std::int64_t body_ttl_ms = 240000;  // a body older than this is signed again (±300 s window)
  bool progress = false;              // progress bar on stderr
  // Gateway mode: every 5xx is resent too (not only 503), and resends back off exponentially from
  // retry_delay_ms up to max_backoff_ms; max_attempts and deadline_s still bound everything. After
  // a transport error (a timeout included) a connection reconnects to the next target.
  bool gateway = false;
  std::uint32_t max_backoff_ms = 1000;
  // Called for every request written, once its answer came (http: its status) or its transport
  // failed (http 0), with the wall-clock send and answer times: the gateway's history.
  std::function<void(std::uint32_t callback, std::int64_t sent_ms, std::int64_t answer_ms,
                     int http)>
      on_exchange;
};

// Returns the complete HTTP request bytes for a callback signed at `now_ms`. Called for every
// callback before timing starts, and again only for a body older than `body_ttl_ms`.
using RequestEncoder = std::function<std::string(std::uint32_t callback, std::int64_t now_ms)>;

struct LoadResult {
  bool finished = false;   // every planned request got a final answer
  bool timed_out = false;  // the deadline stopped the load
  std::string abort_reason;
  double elapsed_s = 0;                        // first send → last final answer
  std::uint64_t planned_requests = 0;          // deliveries in the plan
  std::uint64_t exchanges = 0;                 // HTTP answers received (retries included)
  std::uint64_t acked = 0;                     // deliveries finally answered 200
  std::uint64_t unacked = 0;                   // deliveries that ended without a 200
  std::uint64_t retries_503 = 0;               // resends after a 503 (gateway mode: any 5xx)
  std::uint64_t transport_errors = 0;          // connect/read/write failures and timeouts
  std::uint64_t resigned = 0;                  // bodies signed again because they grew stale
  std::map<int, std::uint64_t> status_counts;  // every answer, by HTTP status
  std::vector<std::uint32_t> latency_us;       // one per answer, sorted ascending
  std::vector<std::uint32_t> acks_per_callback;
  // Requests written per callback id, answered or not: after a timeout or a reset the engine may
  // have applied a request the client never saw answered, so only this bounds duplicate_count.
  std::vector<std::uint32_t> sends_per_callback;
  std::vector<std::uint64_t> acks_per_second;
  // The answers' latencies by the second of the load they came in (from the first send), each
  // sorted ascending: a tail that belongs to some seconds only (a bill run's burst) shows there.
  std::vector<std::vector<std::uint32_t>> latency_us_by_second;
};

// Runs the plan's phases in order over `options.connections` connections on one I/O thread.
// Bounded: every request has at most max_attempts attempts, and the whole load a deadline.
[[nodiscard]] LoadResult run_load(const Plan& plan, const ClientOptions& options,
                                  const RequestEncoder& encode);

}  // namespace seatflow::bench

// The history file (JSON lines) and the checker that replays it against the domain model.
#include "load/history.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "domain/state_machine.hpp"

namespace seatflow::bench {
namespace {

using domain::CallbackAction;
using domain::CallbackKind;
using domain::OrderStatus;
using domain::PaymentStatus;

// Records of a history file longer than this are refused (a history line is ~250 bytes).
constexpr std::size_t kMaxLineBytes = 64 * 1024;

CallbackKind kind_of(int callback_status) {
  return callback_status == 1   ? CallbackKind::success
         : callback_status == 2 ? CallbackKind::failure
                                : CallbackKind::other;
}

// What one callback id of the history did: its sends, its ACKs, its content.
struct CallbackHistory {
  std::string payment_no;
  int callback_status = 0;
  std::set<std::string> digests;        // every content sent under this id
  std::set<std::string> acked_digests;  // contents answered 200
  std::uint64_t sends = 0;
  std::uint64_t acks = 0;
};

// The payment status an outbox event of a payment moves it to.
std::optional<PaymentStatus> payment_target(const std::string& type) {
  if (type == "payment.succeeded") {
    return PaymentStatus::success;
  }
  if (type == "payment.failed") {
    return PaymentStatus::failed;
  }
  if (type == "payment.closed") {
    return PaymentStatus::closed;
  }
  if (type == "payment.refunded") {
    return PaymentStatus::refunded;
  }
  return std::nullopt;
}

std::optional<OrderStatus> order_target(const std::string& type) {
  if (type == "order.paid") {
    return OrderStatus::paid;
  }
  if (type == "order.cancelled") {
    return OrderStatus::cancelled;
  }
  if (type == "order.refunded") {
    return OrderStatus::refunded;
  }
  return std::nullopt;
}

std::string status_text(int payment, int order) {
  return "payment " + std::to_string(payment) + "/order " + std::to_string(order);
}

// Every ACKed callback is durable: its log row exists with its content, and the end state is a
// fixed point of it — applying it again (domain::decide_callback) would move nothing, or it is a
// recorded discrepancy.
CheckItem check_durable(const std::map<std::string, CallbackHistory>& callbacks,
                        const Snapshot& snapshot) {
  Tally oracle("every ACKed callback durable (log row, effect on its payment)");
  for (const auto& [id, cb] : callbacks) {
    if (cb.acks == 0) {
      continue;
    }
    const auto row = snapshot.log.find(id);
    if (row == snapshot.log.end()) {
      oracle.fail(id + " was ACKed but has no log row");
      continue;
    }
    if (row->second.payment_no != cb.payment_no || row->second.status != cb.callback_status) {
      oracle.fail(id + " log row says " + row->second.payment_no + "/" +
                  std::to_string(row->second.status));
      continue;
    }
    const auto state = snapshot.payments.find(cb.payment_no);
    const auto payment = state == snapshot.payments.end()
                             ? std::nullopt
                             : domain::payment_status_from_int(state->second.first);
    const auto order = state == snapshot.payments.end()
                           ? std::nullopt
                           : domain::order_status_from_int(state->second.second);
    if (!payment || !order) {
      oracle.fail(id + ": payment " + cb.payment_no + " is missing or has an unknown status");
      continue;
    }
    const auto decision = domain::decide_callback(*payment, *order, kind_of(cb.callback_status));
    switch (decision.action) {
      case CallbackAction::heal_paid:
      case CallbackAction::ignore:
        oracle.pass();
        break;
      case CallbackAction::discrepancy: {
        const auto open = snapshot.discrepancies.find(cb.payment_no);
        const bool recorded = open != snapshot.discrepancies.end() &&
                              std::find(open->second.begin(), open->second.end(),
                                        decision.discrepancy_kind) != open->second.end();
        if (recorded) {
          oracle.pass();
        } else {
          oracle.fail(id + " was ACKed on " + cb.payment_no + " but no open " +
                      std::string(decision.discrepancy_kind) + " is recorded");
        }
        break;
      }
      case CallbackAction::apply_success:
      case CallbackAction::apply_failure:
        oracle.fail(id + " was ACKed but " + cb.payment_no + " still shows " +
                    status_text(state->second.first, state->second.second) +
                    ": its effect is lost");
        break;
    }
  }
  return oracle.item();
}

// Each callback id applied at most once: one log row (the primary key) whose applications
// (1 + duplicate_count) are no more than the requests sent (times 1 + a balancer's resends), and
// no log row for an id never sent.
CheckItem check_at_most_once(const std::map<std::string, CallbackHistory>& callbacks,
                             const Snapshot& snapshot, std::uint32_t proxy_resends) {
  Tally oracle("each callback id applied at most once (1 + duplicate_count <= requests sent)");
  for (const auto& [id, row] : snapshot.log) {
    const auto cb = callbacks.find(id);
    if (cb == callbacks.end() || cb->second.sends == 0) {
      oracle.fail(id + " has a log row but was never sent");
      continue;
    }
    const auto applications =
        static_cast<std::uint64_t>(1 + std::max<std::int64_t>(0, row.duplicate_count));
    const auto reached = static_cast<std::uint64_t>(cb->second.sends) * (1 + proxy_resends);
    if (row.duplicate_count < 0 || applications > reached) {
      oracle.fail(id + " counted " + std::to_string(applications) + " times after " +
                  std::to_string(cb->second.sends) + " requests");
    } else {
      oracle.pass();
    }
  }
  // A payment moves into each status at most once (the event id is "<type>:<payment>").
  std::map<std::pair<std::string, std::string>, int> moves;
  for (const auto& event : snapshot.events) {
    const bool move = payment_target(event.type) || order_target(event.type);
    if (move && ++moves[{event.payment_no, event.type}] == 2) {
      oracle.fail(event.payment_no + " has " + event.type + " twice");
    }
  }
  return oracle.item();
}

// The same id with other content is never applied: the log row holds a content that was sent under
// the id, and no other content of the id was ACKed.
CheckItem check_content(const std::map<std::string, CallbackHistory>& callbacks,
                        const Snapshot& snapshot) {
  Tally oracle("same callback id with other content never applied");
  std::uint64_t ids_with_variants = 0;
  for (const auto& [id, cb] : callbacks) {
    ids_with_variants += cb.digests.size() > 1 ? 1 : 0;
    const auto row = snapshot.log.find(id);
    if (row == snapshot.log.end()) {
      if (cb.acks == 0) {
        oracle.pass();  // never ACKed, never applied
      }
      continue;  // an ACK without a row is the durability oracle's violation
    }
    if (cb.digests.count(row->second.sha256) == 0) {
      oracle.fail(id + " log row holds content " + row->second.sha256.substr(0, 12) +
                  " that was never sent under it");
      continue;
    }
    bool ok = true;
    for (const auto& digest : cb.acked_digests) {
      if (digest != row->second.sha256) {
        oracle.fail(id + " content " + digest.substr(0, 12) + " was ACKed but " +
                    row->second.sha256.substr(0, 12) + " is the one applied");
        ok = false;
      }
    }
    if (ok) {
      oracle.pass();
    }
  }
  return oracle.item(std::to_string(ids_with_variants) + " ids sent with more than one content");
}

// The callback status whose callback must have been sent for a payment move into `to` (0: none).
int cause_of(PaymentStatus to) {
  return to == PaymentStatus::success ? 1 : to == PaymentStatus::failed ? 2 : 0;
}

// Whether `to` is reachable from `from` by legal moves (`legal`), each step into a status allowed
// by `may_enter`; the statuses are those `from_int` knows (domain::*_status_from_int).
template <class Status, class FromInt, class Legal, class MayEnter>
bool reachable(Status from, Status to, FromInt from_int, Legal legal, MayEnter may_enter) {
  std::set<int> seen{static_cast<int>(from)};
  std::vector<Status> todo{from};
  while (!todo.empty()) {
    const auto at = todo.back();
    todo.pop_back();
    if (at == to) {
      return true;
    }
    for (int i = 0; const auto next = from_int(i); ++i) {
      if (legal(at, *next) && may_enter(*next) && seen.insert(i).second) {
        todo.push_back(*next);
      }
    }
  }
  return false;
}

// With the events partial (HistoryCheckOptions::events_partial): why the end statuses cannot be
// reached from the seed by legal moves, each payment move caused by a callback kind the gateway
// sent ("" when they can).
std::string unreachable_end(PaymentStatus payment, OrderStatus order, const std::set<int>& sent,
                            const std::pair<int, int>& end) {
  const auto end_payment = domain::payment_status_from_int(end.first);
  const auto end_order = domain::order_status_from_int(end.second);
  const bool payment_ok =
      end_payment && reachable(payment, *end_payment, domain::payment_status_from_int,
                               domain::is_legal_payment_move, [&sent](PaymentStatus to) {
                                 return cause_of(to) == 0 || sent.count(cause_of(to)) != 0;
                               });
  const bool order_ok =
      end_order && reachable(order, *end_order, domain::order_status_from_int,
                             domain::is_legal_order_move, [](OrderStatus) { return true; });
  if (payment_ok && order_ok) {
    return "";
  }
  return "the rows' " + status_text(end.first, end.second) + " cannot be reached from the seed " +
         status_text(static_cast<int>(payment), static_cast<int>(order)) +
         " by legal moves and the callbacks sent";
}

// Why the events of one payment, in commit order, do not walk the state machines from its seed to
// its end statuses with each payment move caused by a callback kind the gateway sent ("" when they
// do).
std::string illegal_walk(const std::vector<const SnapshotEvent*>& events, PaymentStatus payment,
                         OrderStatus order, const std::set<int>& sent,
                         const std::pair<int, int>& end) {
  for (const auto* event : events) {
    if (const auto to = payment_target(event->type)) {
      if (!domain::is_legal_payment_move(payment, *to)) {
        return "payment " + std::to_string(static_cast<int>(payment)) + " -> " +
               std::to_string(static_cast<int>(*to)) + " (" + event->event_id + ")";
      }
      const int cause = cause_of(*to);
      if (cause != 0 && sent.count(cause) == 0) {
        return event->type + " without a callback of status " + std::to_string(cause);
      }
      payment = *to;
    } else if (const auto order_to = order_target(event->type)) {
      if (!domain::is_legal_order_move(order, *order_to)) {
        return "order " + std::to_string(static_cast<int>(order)) + " -> " +
               std::to_string(static_cast<int>(*order_to)) + " (" + event->event_id + ")";
      }
      order = *order_to;
    }
  }
  if (static_cast<int>(payment) != end.first || static_cast<int>(order) != end.second) {
    return "the events end at " + status_text(static_cast<int>(payment), static_cast<int>(order)) +
           " but the rows are " + status_text(end.first, end.second);
  }
  return "";
}

// Every payment's moves legal: the outbox rows of a payment, in commit order, walk the state
// machines (domain::is_legal_*_move) from its seeded statuses to its end statuses, and each
// payment move is caused by a callback of the matching kind that the gateway sent.
CheckItem check_moves(const History& history,
                      const std::map<std::string, CallbackHistory>& callbacks,
                      const Snapshot& snapshot, bool events_partial) {
  Tally oracle(events_partial
                   ? "every payment's end reachable by legal moves (events partial: failover)"
                   : "every payment's moves legal (domain state machines, seed -> end)");
  std::unordered_map<std::string, std::vector<const SnapshotEvent*>> by_payment;
  for (const auto& event : snapshot.events) {
    by_payment[event.payment_no].push_back(&event);
  }
  std::unordered_map<std::string, std::set<int>> sent_kinds;
  for (const auto& [id, cb] : callbacks) {
    sent_kinds[cb.payment_no].insert(cb.callback_status);
  }
  for (const auto& p : history.payments) {
    const auto end = snapshot.payments.find(p.payment_no);
    if (end == snapshot.payments.end()) {
      oracle.fail(p.payment_no + " is missing");
      continue;
    }
    const auto payment = domain::payment_status_from_int(p.seed_payment_status);
    const auto order = domain::order_status_from_int(p.seed_order_status);
    const auto& sent = sent_kinds[p.payment_no];
    const std::string why = !payment || !order ? "unknown seed status"
                            : events_partial ? unreachable_end(*payment, *order, sent, end->second)
                                             : illegal_walk(by_payment[p.payment_no], *payment,
                                                            *order, sent, end->second);
    if (why.empty()) {
      oracle.pass();
    } else {
      oracle.fail(p.payment_no + ": " + why);
    }
  }
  return oracle.item();
}

// The event stream equal to the committed moves in per-payment order: per payment, the stream's
// entries (first occurrence of each event id: the relay is at-least-once) are a prefix of its
// outbox rows in seq order that holds at least every row marked published (the relay may publish
// more between the two reads); with Redis data lost, any subsequence of them. Nothing else.
CheckItem check_stream(const History& history, const Snapshot& snapshot,
                       const HistoryCheckOptions& options) {
  Tally oracle(options.stream_lossy
                   ? "event stream a per-payment subsequence of the committed moves (Redis lost)"
                   : "event stream equal to the committed moves in per-payment order");
  if (!snapshot.stream || options.events_partial) {
    return CheckItem{"event stream equal to the committed moves", true,
                     options.events_partial ? "not checked: events partial" : "stream not read"};
  }
  std::unordered_map<std::string, std::vector<std::string>> committed;
  std::unordered_map<std::string, std::size_t> published;
  std::set<std::string> outbox_ids;
  for (const auto& event : snapshot.events) {
    outbox_ids.insert(event.event_id);
    committed[event.payment_no].push_back(event.event_id);
    if (event.published) {
      published[event.payment_no] = committed[event.payment_no].size();
    }
  }
  std::unordered_map<std::string, std::vector<std::string>> streamed;
  std::set<std::string> seen;
  std::uint64_t repeats = 0;
  for (const auto& [event_id, payment_no] : *snapshot.stream) {
    if (!seen.insert(event_id).second) {
      ++repeats;
      continue;
    }
    if (outbox_ids.count(event_id) == 0) {
      oracle.fail(event_id + " is in the stream but was never committed");
      continue;
    }
    streamed[payment_no].push_back(event_id);
  }
  for (const auto& p : history.payments) {
    const auto& want = committed[p.payment_no];
    const auto& have = streamed[p.payment_no];
    bool ok = false;
    if (options.stream_lossy) {
      std::size_t k = 0;
      for (const auto& id : want) {
        if (k < have.size() && have[k] == id) {
          ++k;
        }
      }
      ok = k == have.size();
    } else {
      ok = have.size() >= published[p.payment_no] && have.size() <= want.size() &&
           std::equal(have.begin(), have.end(), want.begin());
    }
    if (ok) {
      oracle.pass();
    } else {
      oracle.fail(p.payment_no + ": the stream has " + std::to_string(have.size()) +
                  " of its events, the outbox " + std::to_string(want.size()) + " (" +
                  std::to_string(published[p.payment_no]) + " published)" +
                  (have.empty() ? "" : ", first " + have.front()));
    }
  }
  return oracle.item(std::to_string(repeats) + " repeated entries (at-least-once)");
}

// No seat held by two live orders: per seat of the run, at most one live order lists it, its
// seat_claim names that order, and Redis names it too (or holds nothing).
CheckItem check_seats_single(const History& history, const Snapshot& snapshot) {
  Tally oracle("no seat held by two live orders (order_info, seat_claim, Redis agree)");
  for (const auto& p : history.payments) {
    for (const auto& seat : p.seats) {
      const auto key = p.show_id + "/" + seat;
      const auto live = snapshot.live_orders_of_seat.find(key);
      const auto claim = snapshot.claim_of_seat.find(key);
      const auto redis = snapshot.redis_seat.find(key);
      const std::vector<std::string> none;
      const auto& orders = live == snapshot.live_orders_of_seat.end() ? none : live->second;
      const std::string holder = claim == snapshot.claim_of_seat.end() ? "" : claim->second;
      const std::string value = redis == snapshot.redis_seat.end() ? "" : redis->second;
      const auto colon = value.find(':');
      const std::string redis_order = colon == std::string::npos ? "" : value.substr(colon + 1);
      if (orders.size() > 1) {
        oracle.fail(key + " is listed by " + std::to_string(orders.size()) + " live orders");
      } else if (!holder.empty() && (orders.empty() || holder != orders.front())) {
        oracle.fail(key + " is claimed by " + holder + ", which is not its live order");
      } else if (!redis_order.empty() && (orders.empty() || redis_order != orders.front())) {
        oracle.fail(key + " is '" + value + "' in Redis, not its live order");
      } else {
        oracle.pass();
      }
    }
  }
  return oracle.item();
}

}  // namespace

HistoryWriter::HistoryWriter(const std::string& path) : out_(path, std::ios::trunc) {
  if (!out_) {
    throw std::runtime_error("cannot open history file " + path);
  }
}

void HistoryWriter::run(const std::string& run_prefix) {
  out_ << nlohmann::json{{"t", "run"}, {"prefix", run_prefix}}.dump() << '\n' << std::flush;
}

void HistoryWriter::payment(const HistoryPayment& p) {
  out_ << nlohmann::json{{"t", "payment"},
                         {"payment", p.payment_no},
                         {"order", p.order_no},
                         {"show", p.show_id},
                         {"seats", p.seats},
                         {"seed_payment", p.seed_payment_status},
                         {"seed_order", p.seed_order_status}}
              .dump()
       << '\n';
}

void HistoryWriter::exchange(const HistoryExchange& e) {
  out_ << nlohmann::json{{"t", "x"},
                         {"cb", e.callback_id},
                         {"payment", e.payment_no},
                         {"status", e.callback_status},
                         {"sha", e.sha256},
                         {"sent_ms", e.sent_ms},
                         {"answer_ms", e.answer_ms},
                         {"http", e.http}}
              .dump()
       << '\n'
       << std::flush;
}

History read_history(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot read history file " + path);
  }
  History history;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) {
      continue;
    }
    try {
      if (line.size() > kMaxLineBytes) {
        throw std::runtime_error("line too long");
      }
      const auto j = nlohmann::json::parse(line);
      const auto type = j.at("t").get<std::string>();
      if (type == "run") {
        history.run_prefix = j.at("prefix").get<std::string>();
      } else if (type == "payment") {
        history.payments.push_back(
            {j.at("payment").get<std::string>(), j.at("order").get<std::string>(),
             j.at("show").get<std::string>(), j.at("seats").get<std::vector<std::string>>(),
             j.at("seed_payment").get<int>(), j.at("seed_order").get<int>()});
      } else if (type == "x") {
        history.exchanges.push_back(
            {j.at("cb").get<std::string>(), j.at("payment").get<std::string>(),
             j.at("status").get<int>(), j.at("sha").get<std::string>(),
             j.at("sent_ms").get<std::int64_t>(), j.at("answer_ms").get<std::int64_t>(),
             j.at("http").get<int>()});
      } else {
        throw std::runtime_error("unknown record type " + type);
      }
    } catch (const std::exception& e) {
      // A killed writer may leave its last line cut: only the last line may be incomplete.
      if (in.peek() == std::char_traits<char>::eof()) {
        break;
      }
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  return history;
}

CheckReport check_history(const History& history, const Snapshot& snapshot,
                          const HistoryCheckOptions& options) {
  std::map<std::string, CallbackHistory> callbacks;
  for (const auto& e : history.exchanges) {
    auto& cb = callbacks[e.callback_id];
    cb.payment_no = e.payment_no;
    cb.callback_status = e.callback_status;
    cb.digests.insert(e.sha256);
    ++cb.sends;
    if (e.http == 200) {
      ++cb.acks;
      cb.acked_digests.insert(e.sha256);
    }
  }
  CheckReport report;
  report.items.push_back({"history recorded",
                          !history.payments.empty() && !history.exchanges.empty(),
                          std::to_string(history.payments.size()) + " payments, " +
                              std::to_string(history.exchanges.size()) + " exchanges, " +
                              std::to_string(callbacks.size()) + " callback ids"});
  report.items.push_back(check_durable(callbacks, snapshot));
  report.items.push_back(check_at_most_once(callbacks, snapshot, options.proxy_resends));
  report.items.push_back(check_content(callbacks, snapshot));
  report.items.push_back(check_moves(history, callbacks, snapshot, options.events_partial));
  report.items.push_back(check_stream(history, snapshot, options));
  report.items.push_back(check_seats_single(history, snapshot));
  return report;
}

}  // namespace seatflow::bench

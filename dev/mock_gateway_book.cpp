// The mock gateway's book: its settlements, its bill, and the payments created and closed at it.
#include "dev/mock_gateway_book.hpp"

#include <algorithm>
#include <utility>

#include "domain/clock.hpp"

namespace seatflow::dev {

std::string_view to_string(MockVerdict verdict) {
  switch (verdict) {
    case MockVerdict::send:
      return "send";
    case MockVerdict::closed:
      return "closed";
    case MockVerdict::expired:
      return "expired";
    case MockVerdict::settled:
      return "settled";
    case MockVerdict::created_here:
      return "created_here";
    case MockVerdict::forgotten:
      return "forgotten";
  }
  return "send";
}

std::string_view to_string(MockCreateOutcome outcome) {
  switch (outcome) {
    case MockCreateOutcome::created:
      return "created";
    case MockCreateOutcome::again:
      return "again";
    case MockCreateOutcome::conflict:
      return "conflict";
    case MockCreateOutcome::closed:
      return "closed";
    case MockCreateOutcome::expired:
      return "expired";
    case MockCreateOutcome::full:
      return "full";
  }
  return "created";
}

MockVerdict take_verdict(const MockCreated* created, bool settled, MockOrigin origin,
                         std::int64_t now_ms) {
  if (created == nullptr) {
    // Not created here: as before SPEC §16, unless its creation's callback finds it forgotten.
    return origin == MockOrigin::created ? MockVerdict::forgotten : MockVerdict::send;
  }
  if (created->closed_at_ms != 0) {
    return MockVerdict::closed;
  }
  if (created->expires_at_ms != 0 && now_ms >= created->expires_at_ms) {
    return MockVerdict::expired;
  }
  if (origin == MockOrigin::committed) {
    return MockVerdict::created_here;
  }
  if (origin == MockOrigin::created && settled) {
    return MockVerdict::settled;
  }
  return MockVerdict::send;
}

void MockGatewayBook::settle(const std::string& payment_no, int status) {
  settle(payment_no, status, 0, domain::unix_time_ms());
}

void MockGatewayBook::settle(const std::string& payment_no, int status, std::int64_t amount_cents,
                             std::int64_t at_ms) {
  const std::lock_guard lock(mutex_);
  settle_locked(payment_no, status, amount_cents, at_ms);
}

void MockGatewayBook::settle_locked(const std::string& payment_no, int status,
                                    std::int64_t amount_cents, std::int64_t at_ms) {
  const auto [it, inserted] =
      entries_.insert_or_assign(payment_no, Entry{status, amount_cents, at_ms, 0, 0});
  if (inserted) {
    order_.push_back(payment_no);
    if (order_.size() > kEntriesMax) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
  }
}

bool MockGatewayBook::refund(const std::string& payment_no, std::int64_t amount_cents,
                             std::int64_t at_ms) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(payment_no);
  if (it == entries_.end() || it->second.status != 1) {
    return false;
  }
  if (it->second.refunded_at_ms == 0) {  // the first refund of it is the one it made
    it->second.refund_cents = amount_cents;
    it->second.refunded_at_ms = at_ms;
  }
  return true;
}

std::optional<int> MockGatewayBook::status_of(const std::string& payment_no) const {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(payment_no);
  return it == entries_.end() ? std::nullopt : std::optional<int>(it->second.status);
}

std::vector<channels::HmacBillEntry> MockGatewayBook::bill(std::int64_t start_ms,
                                                           std::int64_t end_ms) const {
  std::vector<channels::HmacBillEntry> out;
  const auto within = [start_ms, end_ms](std::int64_t at) { return at >= start_ms && at < end_ms; };
  const std::lock_guard lock(mutex_);
  for (const auto& [payment_no, entry] : entries_) {
    const auto trade = "mock-" + payment_no;
    if (entry.status == 1 && entry.amount_cents > 0 && within(entry.at_ms)) {
      out.push_back(
          {trade, payment_no, channels::BillRowKind::payment, entry.amount_cents, entry.at_ms});
    }
    if (entry.refunded_at_ms != 0 && entry.refund_cents > 0 && within(entry.refunded_at_ms)) {
      out.push_back({trade, payment_no, channels::BillRowKind::refund, entry.refund_cents,
                     entry.refunded_at_ms});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.completed_at_ms != b.completed_at_ms ? a.completed_at_ms < b.completed_at_ms
                                                  : a.trade_no < b.trade_no;
  });
  return out;
}

MockTaken MockGatewayBook::take(const MockTake& take) {
  const std::lock_guard lock(mutex_);
  const auto created = created_.find(take.payment_no);
  const MockCreated* here = created == created_.end() ? nullptr : &created->second;
  const auto verdict =
      take_verdict(here, entries_.contains(take.payment_no), take.origin, take.now_ms);
  MockTaken taken{verdict, {}, take.amount_cents};
  if (here != nullptr) {
    taken.notify_url = here->notify_url;
    taken.amount_cents = here->amount_cents;
  }
  if (verdict == MockVerdict::send) {
    settle_locked(take.payment_no, take.status, taken.amount_cents, take.settled_at_ms);
  }
  return taken;
}

MockCreateAnswer MockGatewayBook::create(const std::string& payment_no, MockCreated created,
                                         std::int64_t now_ms) {
  const std::lock_guard lock(mutex_);
  if (const auto it = created_.find(payment_no); it != created_.end()) {
    const auto& held = it->second;
    if (held.pay_url.empty()) {
      return {MockCreateOutcome::closed, {}};
    }
    return {held.amount_cents == created.amount_cents ? MockCreateOutcome::again
                                                      : MockCreateOutcome::conflict,
            held.pay_url};
  }
  if (created.expires_at_ms != 0 && now_ms >= created.expires_at_ms) {
    return {MockCreateOutcome::expired, {}};
  }
  if (!room_locked(now_ms)) {
    return {MockCreateOutcome::full, {}};
  }
  auto pay_url = created.pay_url;
  created.closed_at_ms = 0;
  created_.emplace(payment_no, std::move(created));
  return {MockCreateOutcome::created, std::move(pay_url)};
}

MockCloseOutcome MockGatewayBook::close(const std::string& payment_no, std::int64_t now_ms) {
  const std::lock_guard lock(mutex_);
  if (const auto settled = entries_.find(payment_no);
      settled != entries_.end() && settled->second.status == 1) {
    return MockCloseOutcome::paid;
  }
  if (const auto it = created_.find(payment_no); it != created_.end()) {
    if (it->second.closed_at_ms == 0) {
      it->second.closed_at_ms = now_ms;
    }
    return MockCloseOutcome::closed;
  }
  if (!room_locked(now_ms)) {
    return MockCloseOutcome::full;
  }
  created_.emplace(payment_no, MockCreated{0, 0, {}, {}, now_ms});
  return MockCloseOutcome::not_found;
}

std::optional<MockCreated> MockGatewayBook::created(const std::string& payment_no) const {
  const std::lock_guard lock(mutex_);
  const auto it = created_.find(payment_no);
  return it == created_.end() ? std::nullopt : std::optional<MockCreated>(it->second);
}

bool MockGatewayBook::room_locked(std::int64_t now_ms) {
  if (created_.size() < kCreatedMax) {
    return true;
  }
  if (now_ms < next_prune_ms_) {
    return false;
  }
  next_prune_ms_ = now_ms + kCreatedPruneIntervalMs;
  // Ended long ago: closed, or past its deadline, kCreatedRetentionMs before now. The engine has
  // settled or cancelled such a payment long since.
  const auto ended_long_ago = [now_ms](const MockCreated& created) {
    const auto ended = created.closed_at_ms != 0 ? created.closed_at_ms : created.expires_at_ms;
    return ended != 0 && ended <= now_ms - kCreatedRetentionMs;
  };
  std::erase_if(created_, [&](const auto& item) { return ended_long_ago(item.second); });
  return created_.size() < kCreatedMax;
}

}  // namespace seatflow::dev

// The keys a bill load has seen, as 64-bit hashes (8 bytes a row, not the row): whether any key
// (kind, paymentNo) may come twice, so the load ranks duplicate gateway payments in PostgreSQL
// only when there can be some. Ranking means grouping every staged row (0.8 s for a million rows
// on this machine kind, one burst the callbacks meet); a bill without a repeated key skips it.
// Two keys that share a hash only make the load rank for nothing; a row whose payment is found
// later through its trade (an empty paymentNo: a Stripe refund) may repeat any key, so it always
// does.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace seatflow::persistence {

class BillKeys {
 public:
  void add(std::string_view kind, std::string_view payment_no) {
    if (payment_no.empty()) {
      unresolved_ = true;
      return;
    }
    const std::hash<std::string_view> hash;
    hashes_.push_back(hash(payment_no) * kKindMix + hash(kind));
  }
  // Whether some row's payment is found through its trade (its paymentNo was empty).
  [[nodiscard]] bool unresolved() const { return unresolved_; }
  // Whether two rows may share a key; frees what add() kept.
  [[nodiscard]] bool may_repeat() {
    std::sort(hashes_.begin(), hashes_.end());
    const bool repeated = std::adjacent_find(hashes_.begin(), hashes_.end()) != hashes_.end();
    std::vector<std::uint64_t>().swap(hashes_);
    return unresolved_ || repeated;
  }

 private:
  static constexpr std::uint64_t kKindMix = 0x9E3779B97F4A7C15ULL;  // 2^64 / the golden ratio
  std::vector<std::uint64_t> hashes_;
  bool unresolved_ = false;
};

}  // namespace seatflow::persistence

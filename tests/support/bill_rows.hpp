// A bill row sink for the dialects' unit tests: keeps every row it is given.
#pragma once

#include <vector>

#include "channels/bill.hpp"

namespace seatflow::testing {

class KeptRows final : public channels::BillRowSink {
 public:
  domain::Result<void> row(const channels::BillRow& row) override {
    rows.push_back(row);
    return {};
  }
  std::vector<channels::BillRow> rows;
};

}  // namespace seatflow::testing

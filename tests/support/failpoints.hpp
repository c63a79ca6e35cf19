// Test helper: failpoints from a SEATFLOW_FAILPOINTS spec, for fixtures that own the Failpoints
// their stores read.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "persistence/drivers/failpoints.hpp"

namespace seatflow::testing {

// The failpoints of `spec`; a test failure (naming why) and none armed when it does not parse.
[[nodiscard]] inline persistence::Failpoints failpoints(const std::string& spec) {
  auto parsed = persistence::Failpoints::parse(spec);
  if (!parsed.ok()) {
    ADD_FAILURE() << "failpoints '" << spec << "': " << parsed.detail();
    return {};
  }
  return std::move(parsed).value();
}

}  // namespace seatflow::testing

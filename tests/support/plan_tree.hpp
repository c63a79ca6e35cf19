// Test helper: searches a PostgreSQL plan tree (EXPLAIN (FORMAT JSON)'s "Plan").
#pragma once

#include <nlohmann/json.hpp>

namespace seatflow::testing {

// Whether `node` or any node below it satisfies `pred`.
template <class Pred>
[[nodiscard]] bool any_plan_node(const nlohmann::json& node, const Pred& pred) {
  if (pred(node)) {
    return true;
  }
  if (node.contains("Plans")) {
    for (const auto& child : node["Plans"]) {
      if (any_plan_node(child, pred)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace seatflow::testing

// The settings renamed to one pattern of names, and the lookup that keeps their old names working.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "app/config.hpp"

namespace seatflow::app {

// A setting renamed to the pattern SEATFLOW_<THING>_<UNIT>_MAX (or _MIN) for a limit,
// SEATFLOW_<THING>_<UNIT> for a duration, SEATFLOW_<THING>_PER_S for a rate, with one spelling of
// each word (KEEPALIVE). The old name keeps working.
struct RenamedSetting {
  const char* old_name;
  const char* new_name;
};

// Every renamed setting, old name first.
[[nodiscard]] std::span<const RenamedSetting> renamed_settings();

// The lookup config's readers use: a renamed setting under its new name, else under its old one.
// Appends one warning line to `warnings` for each old name `lookup` holds (saying that the new
// name wins when both are set), once, however often a reader asks. The result refers to `lookup`,
// which must outlive it.
[[nodiscard]] SettingLookup with_old_names(const SettingLookup& lookup,
                                           std::vector<std::string>& warnings);

}  // namespace seatflow::app

// The channels this engine has enabled, looked up by the name in the notify path.
#pragma once

#include <array>
#include <memory>
#include <string_view>

#include "channels/channel.hpp"

namespace seatflow::channels {

class Registry {
 public:
  void add(std::unique_ptr<Channel> channel);
  // nullptr when the name is unknown or the channel is not configured (SPEC §5: 404).
  [[nodiscard]] const Channel* find(std::string_view name) const;
  [[nodiscard]] const Channel* find(domain::Channel id) const;

 private:
  std::array<std::unique_ptr<Channel>, domain::kChannelCount> channels_;
};

}  // namespace seatflow::channels

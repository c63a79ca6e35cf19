// The enabled channels, one slot per domain::Channel, looked up by notify-path name or by id.
#include "channels/registry.hpp"

#include <cassert>
#include <cstddef>
#include <utility>

namespace seatflow::channels {

void Registry::add(std::unique_ptr<Channel> channel) {
  // A null channel is a wiring bug in the caller, not an operating error.
  assert(channel != nullptr);
  const auto index = static_cast<std::size_t>(channel->id());
  assert(index < channels_.size());
  // Adding a second channel with the same id replaces the first (the last configuration wins).
  channels_[index] = std::move(channel);
}

const Channel* Registry::find(std::string_view name) const {
  const auto id = domain::parse_channel(name);
  if (!id) {
    return nullptr;
  }
  return find(*id);
}

const Channel* Registry::find(domain::Channel id) const {
  const auto index = static_cast<std::size_t>(id);
  if (index >= channels_.size()) {
    return nullptr;
  }
  return channels_[index].get();
}

}  // namespace seatflow::channels

// The reference for codec::read_json_members: the same members read through nlohmann::json's
// SAX parser (what the hmac dialect used before its own reader). The unit test and the hmac fuzz
// target require both to agree on every input.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "codec/json_members.hpp"

namespace seatflow::testing {

class JsonMembersReference {
 public:
  using json = nlohmann::json;
  using Kind = codec::JsonMember::Kind;

  JsonMembersReference(std::span<const std::string_view> names, std::span<codec::JsonMember> out)
      : names_(names), out_(out) {}

  // nlohmann's SAX interface: each handler returns false only to stop at a syntax error.
  bool null() { return scalar(Kind::null); }
  bool boolean(bool /*value*/) { return scalar(Kind::other); }
  bool number_integer(std::int64_t value) {
    if (auto* target = value_target()) {
      target->kind = Kind::int64;
      target->value = value;
    }
    return done_value();
  }
  bool number_unsigned(std::uint64_t value) {
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return scalar(Kind::other);
    }
    return number_integer(static_cast<std::int64_t>(value));
  }
  bool number_float(double /*value*/, const std::string& /*text*/) { return scalar(Kind::other); }
  bool string(std::string& text) {
    if (auto* target = value_target()) {
      target->kind = Kind::string;
      target->text = text;
    }
    return done_value();
  }
  bool binary(json::binary_t& /*value*/) { return scalar(Kind::other); }
  bool start_object(std::size_t /*size*/) {
    if (depth_ == 0) {
      object_ = true;
    } else if (auto* target = value_target()) {
      target->kind = Kind::other;
    }
    ++depth_;
    current_ = npos;
    return true;
  }
  bool end_object() { return end_container(); }
  bool start_array(std::size_t /*size*/) {
    if (auto* target = value_target()) {
      target->kind = Kind::other;
    }
    ++depth_;
    current_ = npos;
    return true;
  }
  bool end_array() { return end_container(); }
  bool key(std::string& name) {
    current_ = npos;
    if (depth_ == 1) {
      for (std::size_t i = 0; i < names_.size(); ++i) {
        if (name == names_[i]) {
          current_ = i;
        }
      }
    }
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) {
    return false;
  }

  // What read_json_members must return for `body` (and leave in `out`).
  static bool read(std::string_view body, std::span<const std::string_view> names,
                   std::span<codec::JsonMember> out) {
    JsonMembersReference reader(names, out);
    return json::sax_parse(body, &reader) && reader.object_;
  }

 private:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  codec::JsonMember* value_target() {
    return depth_ == 1 && current_ != npos ? &out_[current_] : nullptr;
  }
  bool scalar(Kind kind) {
    if (auto* target = value_target()) {
      target->kind = kind;
    }
    return done_value();
  }
  bool done_value() {
    current_ = npos;
    return true;
  }
  bool end_container() {
    --depth_;
    current_ = npos;
    return true;
  }

  std::span<const std::string_view> names_;
  std::span<codec::JsonMember> out_;
  std::size_t depth_ = 0;
  std::size_t current_ = npos;
  bool object_ = false;
};

}  // namespace seatflow::testing

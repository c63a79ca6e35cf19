// Reading an API request: body fields, query parameters, path values; 400s as values.
#include "http/api_request.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

#include "codec/text.hpp"
#include "http/status.hpp"

namespace seatflow::http {

using nlohmann::json;

namespace {

std::string id_rule_text(const char* field) {
  return std::string(field) + " must be 1-" + std::to_string(domain::id_bytes_max) +
         " characters of [A-Za-z0-9_.:-]";
}

std::string printable_rule_text(const char* name) {
  return std::string(name) + " must be 1-" + std::to_string(domain::id_bytes_max) +
         " characters without control characters";
}

bool is_leap(int year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

// Reads `n` digits at `at` into `value`; false when they are not all there.
bool digits(std::string_view t, std::size_t at, std::size_t n, int& value) {
  if (at + n > t.size()) {
    return false;
  }
  value = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (t[i] < '0' || t[i] > '9') {
      return false;
    }
    value = value * 10 + (t[i] - '0');
  }
  return true;
}

// The optional ":SS[.frac]" after "HH:MM" at `at`; moves `at` past it. False when malformed.
bool seconds_part(std::string_view t, std::size_t& at, int& second) {
  if (at >= t.size() || t[at] != ':') {
    return true;
  }
  if (!digits(t, at + 1, 2, second)) {
    return false;
  }
  at += 3;
  if (at < t.size() && t[at] == '.') {
    std::size_t n = 0;
    while (at + 1 + n < t.size() && t[at + 1 + n] >= '0' && t[at + 1 + n] <= '9') {
      ++n;
    }
    if (n == 0 || n > 9) {
      return false;
    }
    at += 1 + n;
  }
  return true;
}

}  // namespace

HttpResponse json_response(int status, const json& body) {
  HttpResponse response{status, "application/json", body.dump(), {}};
  if (status == 503) {
    response.headers.emplace_back("Retry-After", "1");
  }
  return response;
}

json failure_json(const domain::Failure& failure) {
  json body = {{"error", failure.detail}};
  if (!failure.named.key.empty()) {
    body[std::string(failure.named.key)] = failure.named.value;
  }
  return body;
}

HttpResponse json_error(const domain::Failure& failure) {
  return json_response(http_status(failure.code), failure_json(failure));
}

Result<json> parse_body(const HttpRequest& request) {
  auto body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return bad_request("body must be a JSON object");
  }
  return body;
}

Result<std::string> id_field(const json& body, const char* field, bool required) {
  if (!body.contains(field)) {
    if (required) {
      return bad_request(std::string(field) + " is required", field);
    }
    return std::string();
  }
  if (!body[field].is_string() ||
      !domain::valid_id(body[field].get<std::string>(), domain::IdRule::api_key)) {
    return bad_request(id_rule_text(field), field);
  }
  return body[field].get<std::string>();
}

Result<persistence::NewOrder> parse_order(const json& body, std::int64_t timeout_ms) {
  persistence::NewOrder order;
  for (auto [field, out, required] :
       {std::tuple{"showId", &order.show_id, true}, std::tuple{"userId", &order.user_id, true},
        std::tuple{"orderNo", &order.order_no, false}}) {
    auto value = id_field(body, field, required);
    if (!value.ok()) {
      return std::move(value).failure();
    }
    *out = std::move(value).value();
  }
  const auto& seats = body.value("seatIds", json());
  if (!seats.is_array() || seats.empty() || seats.size() > seats_per_order_max) {
    return bad_request(
        "seatIds must be an array of 1-" + std::to_string(seats_per_order_max) + " seat ids",
        "seatIds");
  }
  std::set<std::string> seen;
  for (const auto& seat : seats) {
    if (!seat.is_string() || !domain::valid_id(seat.get<std::string>(), domain::IdRule::api_key) ||
        !seen.insert(seat.get<std::string>()).second) {
      return bad_request("seatIds must hold distinct ids of [A-Za-z0-9_.:-]", "seatIds");
    }
    order.seat_ids.push_back(seat.get<std::string>());
  }
  const auto& amount = body.value("amountCents", json());
  if (!amount.is_number_integer() || amount.get<std::int64_t>() <= 0 ||
      amount.get<std::int64_t>() > amount_cents_max) {
    return bad_request("amountCents must be a positive whole number of minor units", "amountCents");
  }
  order.amount_cents = amount.get<std::int64_t>();
  order.timeout_ms = timeout_ms;
  return order;
}

Result<std::int64_t> discrepancy_id(std::string_view id_text) {
  std::int64_t id = 0;
  const auto [ptr, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (ec != std::errc{} || ptr != id_text.data() + id_text.size() || id <= 0) {
    return bad_request("discrepancy id must be a positive whole number", "id");
  }
  return id;
}

std::string_view query_value(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    if (pair.starts_with(key) && pair.size() > key.size() && pair[key.size()] == '=') {
      return pair.substr(key.size() + 1);
    }
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
  }
  return {};
}

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%') {
      if (i + 2 >= text.size()) {
        return std::nullopt;
      }
      const int high = codec::hex_digit_value(text[i + 1]);
      const int low = codec::hex_digit_value(text[i + 2]);
      if (high < 0 || low < 0) {
        return std::nullopt;
      }
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (text[i] == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

Result<QueryParams> parse_query(std::string_view query, std::span<const std::string_view> known) {
  QueryParams params;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) {
      continue;
    }
    const auto eq = pair.find('=');
    const auto name = percent_decode(pair.substr(0, eq), true);
    const auto value = percent_decode(
        eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1), true);
    if (!name || std::find(known.begin(), known.end(), *name) == known.end()) {
      const auto shown = name ? *name : std::string(pair.substr(0, eq));
      return bad_request("unknown query parameter " + shown.substr(0, domain::id_bytes_max),
                         shown.substr(0, domain::id_bytes_max));
    }
    if (!value) {
      return bad_request(*name + " has a broken percent-escape", *name);
    }
    if (!params.emplace(*name, *value).second) {
      return bad_request(*name + " is given more than once", *name);
    }
  }
  return params;
}

Result<std::string> filter_text(const QueryParams& params, const char* name) {
  const auto it = params.find(name);
  if (it == params.end() || it->second.empty()) {
    return std::string();
  }
  if (!domain::valid_id(it->second, domain::IdRule::printable_bytes)) {
    return bad_request(printable_rule_text(name), name);
  }
  return it->second;
}

Result<std::string> path_id(const std::string& id, const char* name) {
  if (!domain::valid_id(id, domain::IdRule::printable_bytes)) {
    return bad_request(printable_rule_text(name), name);
  }
  return id;
}

bool valid_rfc3339(std::string_view t) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (t.size() > 40 || !digits(t, 0, 4, year) || t.size() < 16 || t[4] != '-' ||
      !digits(t, 5, 2, month) || t[7] != '-' || !digits(t, 8, 2, day) || t[10] != 'T' ||
      !digits(t, 11, 2, hour) || t[13] != ':' || !digits(t, 14, 2, minute)) {
    return false;
  }
  std::size_t at = 16;
  if (!seconds_part(t, at, second)) {
    return false;
  }
  constexpr std::array<int, 12> kDays{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 1970 || month < 1 || month > 12 || day < 1 ||
      day > kDays[static_cast<std::size_t>(month - 1)] + (month == 2 && is_leap(year) ? 1 : 0) ||
      hour > 23 || minute > 59 || second > 59) {
    return false;
  }
  if (at + 1 == t.size() && t[at] == 'Z') {
    return true;
  }
  int off_h = 0, off_m = 0;
  return at + 6 == t.size() && (t[at] == '+' || t[at] == '-') && digits(t, at + 1, 2, off_h) &&
         t[at + 3] == ':' && digits(t, at + 4, 2, off_m) && off_h < 24 && off_m < 60;
}

}  // namespace seatflow::http

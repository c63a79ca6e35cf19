// Reading an API request: its JSON body, its query string and its path values. Each reader returns
// the value or the 400 that names the field (http::errc::bad_request, see bad_request() in
// http/errc.hpp); nothing here throws for a bad request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "domain/ids.hpp"
#include "http/api_json.hpp"
#include "http/errc.hpp"
#include "http/status.hpp"
#include "http/types.hpp"
#include "persistence/stores/order_store.hpp"

namespace seatflow::http {

using QueryParams = std::map<std::string, std::string, std::less<>>;

inline constexpr std::size_t seats_per_order_max = 64;
inline constexpr std::int64_t amount_cents_max = 1'000'000'000'000;
inline constexpr std::size_t discrepancy_page_max = 500;
inline constexpr std::size_t discrepancy_page_default = 100;

// A JSON response; 503 carries Retry-After.
[[nodiscard]] HttpResponse json_response(int status, const nlohmann::json& body);
// A failure's answer: its status from the table in http/status.hpp, and the body
// {"error": detail} with the member it names ({"field": ...}, {"seatId": ...}), when it names one.
[[nodiscard]] nlohmann::json failure_json(const domain::Failure& failure);
[[nodiscard]] HttpResponse json_error(const domain::Failure& failure);
// A store's answer: its status from the table in http/status.hpp, and its body: the row, or the
// refusal's reason with the key it names.
template <class Row>
[[nodiscard]] int store_status(const Result<persistence::Stored<Row>>& result) {
  return result.ok() ? http_status(result.value().done) : http_status(result.error());
}
template <class Row>
[[nodiscard]] nlohmann::json store_body(const Result<persistence::Stored<Row>>& result) {
  return result.ok() ? to_json(result.value().row) : failure_json(result.failure());
}
template <class Row>
[[nodiscard]] HttpResponse from_store(const Result<persistence::Stored<Row>>& result) {
  return json_response(store_status(result), store_body(result));
}

// The body as a JSON object.
[[nodiscard]] Result<nlohmann::json> parse_body(const HttpRequest& request);
// A string id field under the API's id rule; "" when absent and not required.
[[nodiscard]] Result<std::string> id_field(const nlohmann::json& body, const char* field,
                                           bool required);
[[nodiscard]] Result<persistence::NewOrder> parse_order(const nlohmann::json& body,
                                                        std::int64_t timeout_ms);
// A path's discrepancy id: a positive whole number.
[[nodiscard]] Result<std::int64_t> discrepancy_id(std::string_view id_text);

// The raw value of `key` in a query string ("" when absent), undecoded.
[[nodiscard]] std::string_view query_value(std::string_view query, std::string_view key);
// RFC 3986 percent-decoding of one query value or path segment ('+' is a space in a query);
// nullopt for a broken escape.
[[nodiscard]] std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);
// The query parameters of a request, decoded; a parameter outside `known`, a repeated one or a
// broken escape is a 400 naming it.
[[nodiscard]] Result<QueryParams> parse_query(std::string_view query,
                                              std::span<const std::string_view> known);
// A search value (payment, order or callback id): what gateways send is not bound to the API's id
// alphabet, so any text without control characters (IdRule::printable_bytes); "" = any.
[[nodiscard]] Result<std::string> filter_text(const QueryParams& params, const char* name);
// A path value under the same rule as filter_text.
[[nodiscard]] Result<std::string> path_id(const std::string& id, const char* name);
// RFC 3339 date-time with an explicit offset, every field in range.
[[nodiscard]] bool valid_rfc3339(std::string_view text);

}  // namespace seatflow::http

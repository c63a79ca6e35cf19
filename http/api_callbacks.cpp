// The callback log and the timeline (SPEC §12): search, one callback, a replay through the same
// pipeline as the notify path, and a payment's timeline.
#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>

#include "domain/clock.hpp"
#include "http/api_json.hpp"
#include "http/api_routes.hpp"
#include "http/status.hpp"
#include "persistence/stores/callback_log.hpp"

namespace seatflow::http {
namespace {

using nlohmann::json;

// The classes a log row records (a first delivery's), and "duplicate": rows with copies.
constexpr std::array<std::string_view, 4> kSearchResults = {"applied", "ignored", "discrepancy",
                                                            "duplicate"};

// The filter's channel and result values.
Result<void> read_classes(const QueryParams& params, persistence::CallbackFilter& filter) {
  if (const auto it = params.find("channel"); it != params.end() && !it->second.empty()) {
    if (!domain::parse_channel(it->second)) {
      return bad_request("channel must be hmac, alipay, wechat, stripe or standard", "channel");
    }
    filter.channel = it->second;
  }
  if (const auto it = params.find("result"); it != params.end() && !it->second.empty()) {
    if (std::find(kSearchResults.begin(), kSearchResults.end(), it->second) ==
        kSearchResults.end()) {
      return bad_request("result must be applied, ignored, discrepancy or duplicate", "result");
    }
    filter.result = it->second;
  }
  return {};
}

// The filter's time range, limit and cursor.
Result<void> read_page(const QueryParams& params, persistence::CallbackFilter& filter) {
  for (const auto* name : {"from", "to"}) {
    const auto it = params.find(name);
    if (it == params.end() || it->second.empty()) {
      continue;
    }
    if (!valid_rfc3339(it->second)) {
      return bad_request(
          std::string(name) + " must be an RFC 3339 time with an offset, e.g. 2026-12-01T18:00:00Z",
          name);
    }
    (std::string_view(name) == "from" ? filter.from : filter.to) = it->second;
  }
  if (const auto it = params.find("limit"); it != params.end()) {
    const auto& text = it->second;
    std::size_t limit = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
    if (ec != std::errc{} || ptr != text.data() + text.size() || limit == 0 ||
        limit > persistence::kCallbackPageMax) {
      return bad_request(
          "limit must be a whole number from 1 to " + std::to_string(persistence::kCallbackPageMax),
          "limit");
    }
    filter.limit = limit;
  }
  if (const auto it = params.find("cursor"); it != params.end() && !it->second.empty()) {
    filter.cursor = persistence::parse_cursor(it->second);
    if (!filter.cursor || filter.cursor->callback_id.size() > domain::id_bytes_max) {
      return bad_request("cursor must be a nextCursor this API answered", "cursor");
    }
  }
  return {};
}

// The search's filter from its query parameters.
Result<persistence::CallbackFilter> read_filter(std::string_view query) {
  static constexpr std::array<std::string_view, 9> kKnown = {
      "paymentNo", "orderNo", "callbackId", "channel", "result", "from", "to", "limit", "cursor"};
  const auto parsed = parse_query(query, kKnown);
  if (!parsed.ok()) {
    return std::move(parsed).failure();
  }
  const auto& params = parsed.value();
  persistence::CallbackFilter filter;
  for (auto [name, out] :
       {std::pair{"paymentNo", &filter.payment_no}, std::pair{"orderNo", &filter.order_no},
        std::pair{"callbackId", &filter.callback_id}}) {
    auto value = filter_text(params, name);
    if (!value.ok()) {
      return std::move(value).failure();
    }
    *out = std::move(value).value();
  }
  if (auto read = read_classes(params, filter); !read.ok()) {
    return std::move(read).failure();
  }
  if (auto read = read_page(params, filter); !read.ok()) {
    return std::move(read).failure();
  }
  return filter;
}

// A replay's answer when today's verification refuses the stored request.
HttpResponse refused_replay(const std::string& callback_id, const domain::Failure& rejection) {
  const auto reason = channels::errc_of(rejection.code);
  return json_response(200, {{"callbackId", callback_id},
                             {"result", domain::to_string(callback_result(reason))},
                             {"httpStatus", http_status(reason)},
                             {"detail", rejection.detail}});
}

// A replay's answer once the pipeline decided the callback.
HttpResponse replayed(const std::string& callback_id, const domain::CallbackOutcome& outcome) {
  json body = {{"callbackId", callback_id},
               {"result", domain::to_string(outcome.result)},
               {"httpStatus", http_status(outcome.result)}};
  if (!outcome.detail.empty()) {
    body["detail"] = outcome.detail;
  }
  return json_response(outcome.result == domain::CallbackResult::unavailable ? 503 : 200, body);
}

// A store's refusal: `not_found` (the resource's own words), anything else unavailable.
HttpResponse store_error(std::error_code error, std::string_view not_found) {
  if (error == persistence::errc::not_found) {
    return json_error(http_status(error), not_found);
  }
  return json_error(http_status(error), "storage unavailable");
}

}  // namespace

Result<void> OrdersApi::search_callbacks(const ApiCall& call, Respond& respond) {
  auto filter = read_filter(call.query);
  if (!filter.ok()) {
    return std::move(filter).failure();
  }
  dispatch(std::move(respond),
           [filter = std::move(filter).value()](auto& store, const Respond& reply) {
             persistence::CallbackLogStore log(store.session());
             const auto page = log.search(filter);
             if (!page.ok()) {
               reply(store_error(page.error(), {}));
               return;
             }
             reply(json_response(200, to_json(page.value())));
           });
  return {};
}

Result<void> OrdersApi::get_callback(const ApiCall& call, Respond& respond) {
  auto callback_id = path_id(call.args.at(0), "callbackId");
  if (!callback_id.ok()) {
    return std::move(callback_id).failure();
  }
  dispatch(std::move(respond),
           [callback_id = std::move(callback_id).value()](auto& store, const Respond& reply) {
             persistence::CallbackLogStore log(store.session());
             const auto detail = log.get(callback_id);
             if (!detail.ok()) {
               reply(store_error(detail.error(), "unknown callback"));
               return;
             }
             reply(json_response(200, to_json(detail.value())));
           });
  return {};
}

Result<void> OrdersApi::payment_timeline(const ApiCall& call, Respond& respond) {
  auto payment_no = path_id(call.args.at(0), "paymentNo");
  if (!payment_no.ok()) {
    return std::move(payment_no).failure();
  }
  dispatch(std::move(respond),
           [payment_no = std::move(payment_no).value()](auto& store, const Respond& reply) {
             // {"payment": {...}, "entries": [...]}: the payment as GET /api/payments/{paymentNo}
             // answers it (an unknown payment is that 404), then its entries in time order.
             auto payment = store.get_payment(payment_no);
             if (!payment.ok()) {
               reply(from_store(payment));
               return;
             }
             persistence::CallbackLogStore log(store.session());
             const auto entries = log.timeline(payment_no);
             if (!entries.ok()) {
               reply(store_error(entries.error(), {}));
               return;
             }
             json listed = json::array();
             for (const auto& entry : entries.value()) {
               listed.push_back(to_json(entry));
             }
             reply(json_response(
                 200, {{"payment", to_json(payment.value().row)}, {"entries", std::move(listed)}}));
           });
  return {};
}

Result<void> OrdersApi::replay_callback(const ApiCall& call, Respond& respond) {
  auto id = path_id(call.args.at(0), "callbackId");
  if (!id.ok()) {
    return std::move(id).failure();
  }
  dispatch(std::move(respond), [this, callback_id = std::move(id).value()](auto& store,
                                                                           const Respond& reply) {
    persistence::CallbackLogStore log(store.session());
    auto stored = log.stored_request(callback_id);
    if (!stored.ok()) {
      reply(store_error(stored.error(), "unknown callback, or one logged without its raw request"));
      return;
    }
    auto& request = stored.value();
    const auto* channel = channels_.find(request.channel);
    if (channel == nullptr) {
      reply(json_error(409, "channel " + request.channel + " is not enabled on this engine"));
      return;
    }
    // The same verification as the notify path, with today's keys; only the freshness window is
    // waived, because this replay is authenticated by the API token (SPEC §12).
    const channels::InboundRequest inbound{request.body, &request.headers,
                                           domain::unix_time_ms() / 1000 * 1000, true};
    auto verified = channel->verify(inbound);
    if (!verified.ok()) {
      reply(refused_replay(callback_id, verified.failure()));
      return;
    }
    auto callback = std::move(verified).value();
    callback.raw = std::make_shared<domain::RawRequest>(
        domain::RawRequest{request.body, {request.headers.begin(), request.headers.end()}});
    // The same pipeline: the router and the payment actor, so an applied callback answers
    // `duplicate` and a new outcome is applied exactly once.
    engine_.submit(std::move(callback),
                   [reply, callback_id](const domain::CallbackOutcome& outcome) {
                     reply(replayed(callback_id, outcome));
                   });
  });
  return {};
}

}  // namespace seatflow::http

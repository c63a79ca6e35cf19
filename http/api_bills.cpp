// Bill runs (SPEC §13): start one (202 with the run), list them by channel and day, one run, and
// its items page by page. The reads run on the API actors with a BillStore over their session.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>

#include "http/api_request.hpp"
#include "http/api_routes.hpp"
#include "http/status.hpp"
#include "persistence/stores/bill_store.hpp"

namespace seatflow::http {
namespace {

using nlohmann::json;

constexpr std::size_t kRunPageMax = 500;
constexpr std::size_t kRunPageDefault = 100;
constexpr std::size_t kItemPageMax = 1000;
constexpr std::size_t kItemPageDefault = 200;

json bill_run_json(const persistence::BillRunRow& run) {
  auto counts = json::parse(run.counts, nullptr, false);
  return {{"id", run.id},
          {"channel", run.channel},
          {"date", run.bill_date},
          {"state", run.state},
          {"reason", run.reason.empty() ? json(nullptr) : json(run.reason)},
          {"rows", run.rows},
          {"matched", run.matched},
          {"repaired", run.repaired},
          {"discrepancies", run.discrepancies},
          {"counts", counts.is_object() ? counts : json::object()},
          {"feesCents", run.fees_cents},
          {"billSha256", run.bill_sha256.empty() ? json(nullptr) : json(run.bill_sha256)},
          {"startedAt", run.started_at},
          {"finishedAt", run.finished_at ? json(*run.finished_at) : json(nullptr)}};
}

template <class T>
json bill_or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json bill_item_json(const persistence::BillItemRow& item) {
  auto detail = json::parse(item.detail, nullptr, false);
  return {{"runId", item.run_id},
          {"seq", item.seq},
          {"outcome", item.outcome},
          {"kind", item.kind},
          {"paymentNo", item.payment_no},
          {"tradeNo", item.trade_no},
          {"refundNo", item.refund_no},
          {"gatewayAmountCents", bill_or_null(item.gateway_amount_cents)},
          {"localAmountCents", bill_or_null(item.local_amount_cents)},
          {"feeCents", item.fee_cents},
          {"completedAt", bill_or_null(item.completed_at)},
          {"detail", detail.is_object() ? detail : json::object()},
          {"discrepancyId", bill_or_null(item.discrepancy_id)}};
}

// A whole number within [min, max] of query parameter `name`, or `fallback` when absent.
Result<std::int64_t> number_param(const QueryParams& params, const char* name, std::int64_t min,
                                  std::int64_t max, std::int64_t fallback) {
  const auto it = params.find(name);
  if (it == params.end()) {
    return fallback;
  }
  std::int64_t value = 0;
  const auto& text = it->second;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size() || value < min || value > max) {
    return bad_request(std::string(name) + " must be a whole number from " + std::to_string(min) +
                           " to " + std::to_string(max),
                       name);
  }
  return value;
}

// A channel SeatFlow speaks ("" when absent and allowed).
Result<std::string> channel_value(const std::string& text, bool required) {
  if (text.empty() && !required) {
    return std::string();
  }
  if (!domain::parse_channel(text)) {
    return bad_request("channel must be one of hmac, alipay, wechat, stripe, standard", "channel");
  }
  return text;
}

Result<std::string> date_value(const std::string& text, const char* name, bool required) {
  if (text.empty() && !required) {
    return std::string();
  }
  if (!persistence::valid_bill_date(text)) {
    return bad_request(std::string(name) + " must be a calendar day YYYY-MM-DD", name);
  }
  return text;
}

std::string param(const QueryParams& params, const char* name) {
  const auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

Result<std::int64_t> run_id(const std::string& text) {
  std::int64_t id = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc{} || ptr != text.data() + text.size() || id <= 0) {
    return bad_request("the run id must be a positive whole number", "id");
  }
  return id;
}

HttpResponse bill_run_answer(const persistence::Result<persistence::BillRunRow>& result) {
  if (!result.ok()) {
    return json_error(result.failure());
  }
  return json_response(200, bill_run_json(result.value()));
}

}  // namespace

Result<void> OrdersApi::start_bill_run(const ApiCall& call, Respond& respond) {
  const auto body = parse_body(call.request);
  if (!body.ok()) {
    return body.failure();
  }
  const auto& fields = body.value();
  const auto text = [&fields](const char* name) {
    return fields.contains(name) && fields[name].is_string() ? fields[name].get<std::string>()
                                                             : std::string();
  };
  auto channel = channel_value(text("channel"), true);
  if (!channel.ok()) {
    return std::move(channel).failure();
  }
  auto date = date_value(text("date"), "date", true);
  if (!date.ok()) {
    return std::move(date).failure();
  }
  const auto bill_channel = *domain::parse_channel(channel.value());
  if (!engine_.has_bill_source(bill_channel)) {
    return Failure{persistence::make_error_code(persistence::errc::conflict),
                   "no bill source is configured for channel " + channel.value(),
                   {}};
  }
  // Opened here, on an API actor, so the answer never waits for a run the bill actor is busy
  // with; the bill actor runs it next.
  dispatch(std::move(respond), [&engine = engine_, bill_channel, date = date.value()](
                                   auto& store, const Respond& reply) {
    persistence::BillStore bills(store.session());
    // Refused (409) before anything is opened while the day has not ended, or a run of it runs.
    auto opened = engine.bill_runner()->open(bills, bill_channel, date);
    if (opened.end != actors::BillEnd::done || !opened.run) {
      reply(json_response(http_status(opened.end), {{"error", opened.detail}}));
      return;
    }
    reply(json_response(http_status(actors::BillEnd::done), bill_run_json(*opened.run)));
    engine.run_bill({bill_channel, date, std::move(opened.run)});
  });
  return {};
}

Result<void> OrdersApi::list_bill_runs(const ApiCall& call, Respond& respond) {
  static constexpr std::array<std::string_view, 4> kKnown = {"channel", "from", "to", "limit"};
  const auto parsed = parse_query(call.query, kKnown);
  if (!parsed.ok()) {
    return parsed.failure();
  }
  const auto& params = parsed.value();
  auto channel = channel_value(param(params, "channel"), false);
  auto from = date_value(param(params, "from"), "from", false);
  auto to = date_value(param(params, "to"), "to", false);
  const auto limit = number_param(params, "limit", 1, kRunPageMax, kRunPageDefault);
  for (const auto* failed : {&channel, &from, &to}) {
    if (!failed->ok()) {
      return failed->failure();
    }
  }
  if (!limit.ok()) {
    return limit.failure();
  }
  dispatch(std::move(respond),
           [channel = channel.value(), from = from.value(), to = to.value(),
            limit = static_cast<std::size_t>(limit.value())](auto& store, const Respond& reply) {
             persistence::BillStore bills(store.session());
             const auto runs = bills.runs(channel, from, to, limit);
             if (!runs.ok()) {
               reply(json_error(runs.failure()));
               return;
             }
             json list = json::array();
             for (const auto& run : runs.value()) {
               list.push_back(bill_run_json(run));
             }
             reply(json_response(200, {{"runs", std::move(list)}}));
           });
  return {};
}

Result<void> OrdersApi::get_bill_run(const ApiCall& call, Respond& respond) {
  const auto id = run_id(call.args.at(0));
  if (!id.ok()) {
    return id.failure();
  }
  dispatch(std::move(respond), [id = id.value()](auto& store, const Respond& reply) {
    persistence::BillStore bills(store.session());
    reply(bill_run_answer(bills.run(id)));
  });
  return {};
}

Result<void> OrdersApi::bill_run_items(const ApiCall& call, Respond& respond) {
  static constexpr std::array<std::string_view, 3> kKnown = {"outcome", "cursor", "limit"};
  const auto id = run_id(call.args.at(0));
  const auto parsed = parse_query(call.query, kKnown);
  if (!id.ok() || !parsed.ok()) {
    return !id.ok() ? id.failure() : parsed.failure();
  }
  const auto outcome = param(parsed.value(), "outcome");
  const auto& all = persistence::bill_outcomes();
  if (!outcome.empty() && std::find(all.begin(), all.end(), outcome) == all.end()) {
    return bad_request("outcome must be one of the item outcomes of SPEC §13", "outcome");
  }
  const auto cursor = number_param(parsed.value(), "cursor", 0, INT64_MAX, 0);
  const auto limit = number_param(parsed.value(), "limit", 1, kItemPageMax, kItemPageDefault);
  if (!cursor.ok() || !limit.ok()) {
    return !cursor.ok() ? cursor.failure() : limit.failure();
  }
  dispatch(std::move(respond), [id = id.value(), outcome, cursor = cursor.value(),
                                limit = static_cast<std::size_t>(limit.value())](
                                   auto& store, const Respond& reply) {
    persistence::BillStore bills(store.session());
    const auto page = bills.items(id, outcome, cursor, limit);
    if (!page.ok()) {
      reply(json_error(page.failure()));
      return;
    }
    json items = json::array();
    for (const auto& item : page.value().items) {
      items.push_back(bill_item_json(item));
    }
    const auto& next = page.value().next_cursor;
    reply(json_response(200, {{"items", std::move(items)},
                              {"nextCursor", next ? json(std::to_string(*next)) : json(nullptr)}}));
  });
  return {};
}

}  // namespace seatflow::http

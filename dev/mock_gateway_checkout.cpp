// The mock gateway's checkout page: what a payment's pay URL shows a customer in a browser (the
// payment number, amount, deadline and state) with a Pay and a Fail button, which ask the mock to
// pay or fail it as POST /api/mock-gateway/pay does. Plain HTML, one script and one style sheet of
// its own origin (no inline script or style, nothing from elsewhere: kCheckoutCsp).
#include <cctype>
#include <cstdio>
#include <utility>

#include <nlohmann/json.hpp>

#include "channels/hmac/hmac_bill.hpp"
#include "dev/mock_gateway.hpp"
#include "domain/clock.hpp"

namespace seatflow::dev {
namespace {

using nlohmann::json;

// The body of a Pay or Fail click: {"success": true|false}.
constexpr std::size_t kCheckoutBodyBytesMax = 256;

// As the console's (http/console.hpp): this origin's own script, style and fetches only.
constexpr std::string_view kCheckoutCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

constexpr std::string_view kCheckoutScript = R"js(// The mock gateway's checkout page: Pay and Fail.
const root = document.getElementById('checkout');
const state = document.getElementById('state');
const result = document.getElementById('result');
const pay = document.getElementById('pay');
const fail = document.getElementById('fail');

function settle(name, message) {
  state.textContent = name;
  result.textContent = message;
  pay.disabled = fail.disabled = name !== 'open' && name !== 'failed';
}

async function submit(success) {
  pay.disabled = fail.disabled = true;
  result.textContent = 'Sending…';
  try {
    const response = await fetch(root.dataset.payPath, {
      method: 'POST',
      headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({success}),
    });
    const body = await response.json().catch(() => ({}));
    if (response.status === 409) {
      settle(body.error, `The mock gateway takes no payment: ${body.error}.`);
    } else if (response.ok) {
      settle(success ? 'paid' : 'failed',
             `Sent. The merchant answered ${body.notifyStatus}: ${body.notifyBody}`);
    } else {
      settle(state.textContent, `Not sent (${response.status}): ${body.error || body.notifyBody || ''}`);
      pay.disabled = fail.disabled = false;
    }
  } catch (error) {
    settle(state.textContent, `The mock gateway did not answer: ${error}`);
    pay.disabled = fail.disabled = false;
  }
}

pay.addEventListener('click', () => submit(true));
fail.addEventListener('click', () => submit(false));
const expiresAt = Number(root.dataset.expiresAt);
if (expiresAt > 0 && state.textContent === 'open') {
  setTimeout(() => settle('expired', 'The deadline has passed.'), Math.max(0, expiresAt - Date.now()));
}
)js";

constexpr std::string_view kCheckoutStyle = R"css(body {
  font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f3f4f6; color: #111827;
}
.card {
  max-width: 28rem; margin: 3rem auto; padding: 1.5rem 2rem; background: #fff;
  border-radius: 0.5rem; box-shadow: 0 1px 3px rgba(0, 0, 0, 0.15);
}
h1 { font-size: 1.25rem; margin: 0 0 0.25rem; }
.note { color: #6b7280; margin: 0 0 1rem; }
dl { display: grid; grid-template-columns: 8rem 1fr; gap: 0.25rem 1rem; }
dt { color: #6b7280; }
dd { margin: 0; word-break: break-all; }
.actions { display: flex; gap: 1rem; margin-top: 1rem; }
button { font: inherit; padding: 0.5rem 1.5rem; border-radius: 0.375rem; border: 1px solid #9ca3af; }
#pay { background: #059669; border-color: #059669; color: #fff; }
button:disabled { opacity: 0.5; }
#result { min-height: 1.5rem; }
)css";

std::string html_escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string amount_text(std::int64_t cents, std::string_view currency) {
  char text[48];
  std::snprintf(text, sizeof text, "%lld.%02lld ", static_cast<long long>(cents / 100),
                static_cast<long long>(cents % 100));
  std::string out(text);
  for (const char c : currency) {
    out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  return out;
}

// What the page shows the payment as: paid, closed, expired, failed (it may be paid still) or
// open.
std::string_view checkout_state(const MockCreated& created, std::optional<int> settled,
                                std::int64_t now_ms) {
  if (settled == 1) {
    return "paid";
  }
  const auto verdict = take_verdict(&created, false, MockOrigin::demand, now_ms);
  if (verdict != MockVerdict::send) {
    return to_string(verdict);
  }
  return settled == 2 ? "failed" : "open";
}

http::HttpResponse page_response(int status, std::string_view content_type, std::string body) {
  http::HttpResponse response{status, std::string(content_type), std::move(body), {}};
  response.headers.emplace_back("Content-Security-Policy", std::string(kCheckoutCsp));
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.headers.emplace_back("Referrer-Policy", "no-referrer");
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

// {{name}} is filled by page(); every value is escaped there.
constexpr std::string_view kCheckoutPage = R"html(<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Mock gateway checkout</title>
  <link rel="stylesheet" href="{{stylePath}}">
  <script type="module" src="{{scriptPath}}"></script>
</head>
<body>
  <main class="card" id="checkout" data-pay-path="{{payPath}}" data-expires-at="{{expiresAt}}">
    <h1>SeatFlow mock gateway</h1>
    <p class="note">Development only: no money moves.</p>
    <dl>
      <dt>Payment</dt><dd id="payment-no">{{paymentNo}}</dd>
      <dt>Amount</dt><dd id="amount">{{amount}}</dd>
      <dt>Pay before</dt><dd id="deadline">{{deadline}}</dd>
      <dt>Status</dt><dd id="state">{{state}}</dd>
    </dl>
    <div class="actions">
      <button type="button" id="pay"{{disabled}}>Pay</button>
      <button type="button" id="fail"{{disabled}}>Fail</button>
    </div>
    <p id="result" role="status" aria-live="polite"></p>
  </main>
</body>
</html>
)html";

std::string page(const std::string& payment_no, const MockCreated& created, std::string_view state,
                 std::string_view currency) {
  const bool payable = state == "open" || state == "failed";
  const std::pair<std::string_view, std::string> values[] = {
      {"stylePath", std::string(kCheckoutStylePath)},
      {"scriptPath", std::string(kCheckoutScriptPath)},
      {"payPath", checkout_path(payment_no) + "/pay"},
      {"expiresAt", std::to_string(created.expires_at_ms)},
      {"paymentNo", payment_no},
      {"amount", amount_text(created.amount_cents, currency)},
      {"deadline", created.expires_at_ms > 0 ? channels::format_utc_ms(created.expires_at_ms)
                                             : std::string("none")},
      {"state", std::string(state)},
      {"disabled", payable ? std::string() : std::string(" disabled")},
  };
  // One pass over the template: a value is never read as a placeholder.
  std::string html;
  std::string_view rest = kCheckoutPage;
  for (auto open = rest.find("{{"); open != std::string_view::npos; open = rest.find("{{")) {
    const auto end = rest.find("}}", open);
    const auto name = rest.substr(open + 2, end - open - 2);
    html.append(rest.substr(0, open));
    for (const auto& [key, value] : values) {
      if (key == name) {
        html.append(html_escaped(value));
      }
    }
    rest.remove_prefix(end + 2);
  }
  html.append(rest);
  return html;
}

// A path segment: RFC 3986 unreserved bytes as they are, every other byte %XY.
std::string path_segment(std::string_view text) {
  constexpr std::string_view kHex = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4U]);
      out.push_back(kHex[byte & 0x0FU]);
    }
  }
  return out;
}

}  // namespace

std::string checkout_path(std::string_view payment_no) {
  return std::string(kCheckoutPath) + path_segment(payment_no);
}

void MockGateway::checkout_page(const http::HttpRequest& /*request*/,
                                const std::vector<std::string>& args,
                                http::Respond& respond) const {
  const std::string& payment_no = args.front();
  const auto created = settings_.book->created(payment_no);
  if (!created || created->pay_url.empty()) {
    respond(page_response(404, "text/plain", "no such payment at the mock gateway"));
    return;
  }
  const auto state =
      checkout_state(*created, settings_.book->status_of(payment_no), domain::unix_time_ms());
  respond(page_response(200, "text/html; charset=utf-8",
                        page(payment_no, *created, state, settings_.currency)));
}

void MockGateway::checkout_script(const http::HttpRequest& /*request*/,
                                  const std::vector<std::string>& /*args*/,
                                  http::Respond& respond) const {
  respond(page_response(200, "text/javascript; charset=utf-8", std::string(kCheckoutScript)));
}

void MockGateway::checkout_style(const http::HttpRequest& /*request*/,
                                 const std::vector<std::string>& /*args*/,
                                 http::Respond& respond) const {
  respond(page_response(200, "text/css; charset=utf-8", std::string(kCheckoutStyle)));
}

void MockGateway::checkout_pay(const http::HttpRequest& request,
                               const std::vector<std::string>& args, http::Respond& respond) const {
  const std::string& payment_no = args.front();
  const auto created = settings_.book->created(payment_no);
  if (!created || created->pay_url.empty()) {
    respond(http::json_error(404, "no such payment at the mock gateway"));
    return;
  }
  const json body = request.body.size() > kCheckoutBodyBytesMax
                        ? json(nullptr)
                        : json::parse(request.body, nullptr, false);
  if (!body.is_object() || !body.contains("success") || !body["success"].is_boolean()) {
    respond(http::json_error(400, "the body must be {\"success\": true|false}"));
    return;
  }
  const auto actor = handle();
  if (engine_ == nullptr || !actor) {
    respond(http::json_error(503, "unavailable: the mock gateway is not running"));
    return;
  }
  if (checkout_inflight_.fetch_add(1) >= kCheckoutInflightMax) {
    checkout_inflight_.fetch_sub(1);
    respond(http::json_error(503, "too many checkout payments in flight"));
    return;
  }
  const int status = body["success"].get<bool>() ? 1 : 2;
  // The slot is given back as the answer goes out, whichever way it comes.
  auto answer = [self = shared_from_this(), respond](http::HttpResponse response) {
    self->checkout_inflight_.fetch_sub(1);
    respond(std::move(response));
  };
  engine_->ask(
      actor, caf::infinite,
      [answer](const MockDelivered& delivered) { answer(delivered_response(delivered)); },
      [answer](const caf::error& /*why*/) {
        answer(http::json_error(503, "unavailable: the mock gateway gave no answer"));
      },
      pay_atom::value, MockDelivery{payment_no, status, 0, 0, MockOrigin::demand});
}

}  // namespace seatflow::dev

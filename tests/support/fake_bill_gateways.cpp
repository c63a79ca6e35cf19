// The fake WeChat Pay and Alipay bill servers (see the header): real signatures both ways.
#include "support/fake_bill_gateways.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "channels/alipay/alipay_bill.hpp"
#include "channels/alipay/alipay_channel.hpp"
#include "channels/gateway_signer.hpp"
#include "channels/wechat/wechat_bill.hpp"
#include "codec/crypto.hpp"
#include "codec/stream_digest.hpp"
#include "domain/clock.hpp"
#include "support/fake_gateways.hpp"

namespace seatflow::testing {
namespace {

using nlohmann::json;

// The value of `name` in the query of `target`; empty when absent.
std::string query_value(const std::string& target, const std::string& name) {
  const auto query = target.find('?');
  if (query == std::string::npos) {
    return {};
  }
  const std::string key = name + "=";
  std::size_t at = query + 1;
  while (at < target.size()) {
    const auto end = std::min(target.find('&', at), target.size());
    if (target.compare(at, key.size(), key) == 0) {
      return target.substr(at + key.size(), end - at - key.size());
    }
    at = end + 1;
  }
  return {};
}

std::string sha1_hex(std::string_view bytes) {
  codec::StreamDigest digest(codec::StreamDigest::Algorithm::sha1);
  digest.update(bytes);
  return digest.hex();
}

// bad_total: one more than the true count (WeChat Pay counts every row, Alipay's 交易合计 the
// 交易 rows).
FakeBillFlaws flaws_for(FakeBillMode mode, const std::vector<FakeBillRow>& rows, bool every_row) {
  FakeBillFlaws flaws;
  if (mode == FakeBillMode::bad_total) {
    std::int64_t counted = 0;
    for (const auto& row : rows) {
      counted += every_row || !row.refund ? 1 : 0;
    }
    flaws.count = counted + 1;
  }
  return flaws;
}

// RSA2 as Alipay's OpenAPI checks a request: every param but `sign`, sign_type included.
bool alipay_request_signed(const channels::AlipayForm& form, EVP_PKEY* merchant_public_key) {
  channels::AlipayForm signed_form = form;
  if (form.sign_type) {
    signed_form.signed_params.push_back(channels::FormParam{"sign_type", *form.sign_type});
  }
  std::sort(signed_form.signed_params.begin(), signed_form.signed_params.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  const std::string content = channels::alipay_sign_content(signed_form);
  const auto signature = codec::base64_decode(form.sign, channels::kAlipayMaxSignatureBytes);
  const std::array<std::string_view, 1> pieces{content};
  return signature && codec::rsa_sha256_verify(merchant_public_key, pieces, *signature);
}

std::string alipay_error(const std::string& code, const std::string& sub_code) {
  return json{
      {"code", code}, {"msg", "Business Failed"}, {"sub_code", sub_code}, {"sub_msg", "账单不存在"}}
      .dump();
}

}  // namespace

void FakeBillBook::set_bill(const std::string& date, std::vector<FakeBillRow> rows) {
  const std::lock_guard lock(mutex_);
  bills_[date] = std::move(rows);
}

void FakeBillBook::set_mode(FakeBillMode mode) {
  const std::lock_guard lock(mutex_);
  mode_ = mode;
}

int FakeBillBook::bill_requests() const {
  const std::lock_guard lock(mutex_);
  return bill_requests_;
}

int FakeBillBook::downloads() const {
  const std::lock_guard lock(mutex_);
  return downloads_;
}

int FakeBillBook::refused_signatures() const {
  const std::lock_guard lock(mutex_);
  return refused_;
}

bool FakeBillBook::bill(const std::string& date, std::vector<FakeBillRow>* rows) const {
  const std::lock_guard lock(mutex_);
  const auto it = bills_.find(date);
  if (it == bills_.end()) {
    return false;
  }
  *rows = it->second;
  return true;
}

FakeBillMode FakeBillBook::mode() const {
  const std::lock_guard lock(mutex_);
  return mode_;
}

void FakeBillBook::count_bill_request() {
  const std::lock_guard lock(mutex_);
  ++bill_requests_;
}

void FakeBillBook::count_download() {
  const std::lock_guard lock(mutex_);
  ++downloads_;
}

void FakeBillBook::count_refused() {
  const std::lock_guard lock(mutex_);
  ++refused_;
}

FakeWechatBillServer::FakeWechatBillServer(std::string mchid, std::string merchant_serial,
                                           const TestKeyPair& merchant_key,
                                           std::string platform_serial,
                                           const TestKeyPair& platform_key)
    : mchid_(std::move(mchid)),
      merchant_serial_(std::move(merchant_serial)),
      merchant_key_(merchant_key),
      platform_serial_(std::move(platform_serial)),
      platform_key_(platform_key),
      server_(std::make_unique<TestHttpServer>(
          [this](const ServerRequest& request) { return handle(request); }, true)) {}

bool FakeWechatBillServer::authorized(const ServerRequest& request) const {
  return wechat_merchant_signed(request, mchid_, merchant_serial_, merchant_key_);
}

ServerResponse FakeWechatBillServer::signed_answer(int status, std::string body) const {
  const auto signed_headers = channels::wechat_sign(
      body, platform_serial_, domain::unix_time_ms() / 1000, platform_key_.private_key.get());
  return ServerResponse{status,
                        {{"Content-Type", "application/json"},
                         {"Wechatpay-Timestamp", signed_headers.timestamp},
                         {"Wechatpay-Nonce", signed_headers.nonce},
                         {"Wechatpay-Signature", signed_headers.signature},
                         {"Wechatpay-Serial", signed_headers.serial}},
                        std::move(body),
                        0};
}

ServerResponse FakeWechatBillServer::tradebill(const std::string& date) {
  count_bill_request();
  std::vector<FakeBillRow> rows;
  if (mode() == FakeBillMode::not_ready) {
    return signed_answer(400, R"({"code":"STATEMENT_CREATING","message":"账单生成中"})");
  }
  if (!bill(date, &rows)) {
    return signed_answer(400, R"({"code":"NO_STATEMENT_EXIST","message":"请求的账单文件不存在"})");
  }
  const std::string text = wechat_bill_text(rows, flaws_for(mode(), rows, true));
  const std::string hash = sha1_hex(mode() == FakeBillMode::wrong_hash ? text + " " : text);
  const json answer = {{"hash_type", "SHA1"},
                       {"hash_value", hash},
                       {"download_url", url() + "/v3/billdownload/file?token=" + date}};
  return signed_answer(200, answer.dump());
}

ServerResponse FakeWechatBillServer::download(const std::string& date) {
  count_download();
  std::vector<FakeBillRow> rows;
  if (!bill(date, &rows)) {
    return signed_answer(404, R"({"code":"RESOURCE_NOT_EXISTS","message":"token"})");
  }
  std::string gz = gzip_bytes(wechat_bill_text(rows, flaws_for(mode(), rows, true)));
  if (mode() == FakeBillMode::corrupt) {
    gz.resize(gz.size() / 2);
  }
  return ServerResponse{200, {{"Content-Type", "application/octet-stream"}}, std::move(gz), 0};
}

ServerResponse FakeWechatBillServer::handle(const ServerRequest& request) {
  const std::string path = request.target.substr(0, request.target.find('?'));
  if (request.method != "GET" ||
      (path != channels::kWechatTradeBillPath && path != "/v3/billdownload/file")) {
    return signed_answer(404, R"({"code":"NOT_FOUND","message":"no such API"})");
  }
  if (!authorized(request)) {
    count_refused();
    return signed_answer(401, R"({"code":"SIGN_ERROR","message":"signature mismatch"})");
  }
  if (path == "/v3/billdownload/file") {
    return download(query_value(request.target, "token"));
  }
  if (query_value(request.target, "bill_type") != "ALL" ||
      query_value(request.target, "tar_type") != "GZIP") {
    return signed_answer(400, R"({"code":"PARAM_ERROR","message":"bill_type"})");
  }
  return tradebill(query_value(request.target, "bill_date"));
}

FakeAlipayBillServer::FakeAlipayBillServer(std::string app_id, const TestKeyPair& merchant_key,
                                           const TestKeyPair& alipay_key)
    : app_id_(std::move(app_id)),
      merchant_key_(merchant_key),
      alipay_key_(alipay_key),
      server_(std::make_unique<TestHttpServer>(
          [this](const ServerRequest& request) { return handle(request); }, true)) {}

std::string FakeAlipayBillServer::url_member(const std::string& date) {
  count_bill_request();
  std::vector<FakeBillRow> rows;
  if (mode() == FakeBillMode::not_ready || !bill(date, &rows)) {
    return alipay_error("40004", "isp.bill_not_exist");
  }
  std::string compact = date;
  compact.erase(std::remove(compact.begin(), compact.end(), '-'), compact.end());
  const std::string link = server_->base_url() +
                           "/downloadBillFile.resource?bizType=trade&userId=20880000000000000156"
                           "&fileType=csv.zip&bizDates=" +
                           compact + "&downloadFileName=" + compact + ".csv.zip&token=" + date;
  return json{{"code", "10000"}, {"msg", "Success"}, {"bill_download_url", link}}.dump();
}

ServerResponse FakeAlipayBillServer::download(const std::string& date) {
  count_download();
  std::vector<FakeBillRow> rows;
  if (!bill(date, &rows)) {
    return ServerResponse{404, {}, "no such file", 0};
  }
  std::string compact = date;
  compact.erase(std::remove(compact.begin(), compact.end(), '-'), compact.end());
  std::string zip = alipay_bill_zip(compact, alipay_bill_text(rows, flaws_for(mode(), rows, false)),
                                    mode() == FakeBillMode::corrupt);
  return ServerResponse{200, {{"Content-Type", "application/zip"}}, std::move(zip), 0};
}

ServerResponse FakeAlipayBillServer::handle(const ServerRequest& request) {
  if (request.method == "GET" && request.target.starts_with("/downloadBillFile.resource?")) {
    return download(query_value(request.target, "token"));
  }
  if (request.method != "POST" || request.target != "/gateway.do") {
    return ServerResponse{400, {}, "not an OpenAPI request", 0};
  }
  const auto parsed = channels::parse_alipay_form(request.body);
  const auto* form = parsed.ok() ? &parsed.value() : nullptr;
  std::string member;
  if (form == nullptr || form->sign_type != std::optional<std::string>("RSA2") ||
      !alipay_request_signed(*form, merchant_key_.public_key.get())) {
    count_refused();
    member = alipay_error("40002", "isv.invalid-signature");
  } else if (form->find("app_id") == nullptr || *form->find("app_id") != app_id_ ||
             form->find("method") == nullptr ||
             *form->find("method") != channels::kAlipayBillMethod) {
    member = alipay_error("40002", "isv.invalid-app-id");
  } else {
    const auto* biz_text = form->find("biz_content");
    const json biz = json::parse(biz_text == nullptr ? "" : *biz_text, nullptr, false);
    member = biz.is_object() && biz.value("bill_type", "") == "trade"
                 ? url_member(biz.value("bill_date", ""))
                 : alipay_error("40002", "isv.invalid-arguments");
  }
  const std::string sign =
      codec::base64_encode(codec::rsa_sha256_sign(alipay_key_.private_key.get(), member));
  std::string body = "{\"" + std::string(channels::kAlipayBillResponseMember) + "\":" + member +
                     ",\"sign\":\"" + sign + "\"}";
  return ServerResponse{200, {{"Content-Type", "text/html;charset=utf-8"}}, std::move(body), 0};
}

}  // namespace seatflow::testing

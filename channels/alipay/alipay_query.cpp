// alipay query: the signed alipay.trade.query form, the raw-member scan and the answer's mapping.
#include "channels/alipay/alipay_query.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "channels/alipay/alipay_channel.hpp"
#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {

namespace {

using nlohmann::json;

constexpr std::string_view kCodeBusinessFailed = "40004";
constexpr std::string_view kSubCodeTradeNotExist = "ACQ.TRADE_NOT_EXIST";
// Positions in a JSON text; every step moves forward and stops at the end of the text.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  [[nodiscard]] bool at_end() const { return pos_ == text_.size(); }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  [[nodiscard]] bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  // A string token at the current position; the bytes between its quotes.
  [[nodiscard]] std::optional<std::string_view> string_token() {
    const auto end = string_end(pos_);
    if (!end) {
      return std::nullopt;
    }
    const auto inner = text_.substr(pos_ + 1, *end - pos_ - 2);
    pos_ = *end;
    return inner;
  }

  // Skips one value (string, object, array or bare literal); its raw text.
  [[nodiscard]] std::optional<std::string_view> value() {
    const std::size_t start = pos_;
    if (pos_ >= text_.size()) {
      return std::nullopt;
    }
    const char first = text_[pos_];
    if (first == '"') {
      if (!string_token()) {
        return std::nullopt;
      }
    } else if (first == '{' || first == '[') {
      if (!skip_nested()) {
        return std::nullopt;
      }
    } else {
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}' &&
             text_[pos_] != ']' && text_[pos_] != ' ' && text_[pos_] != '\t' &&
             text_[pos_] != '\n' && text_[pos_] != '\r') {
        ++pos_;
      }
    }
    if (pos_ == start) {
      return std::nullopt;
    }
    return text_.substr(start, pos_ - start);
  }

 private:
  // One past the closing quote of the string that opens at `at`.
  [[nodiscard]] std::optional<std::size_t> string_end(std::size_t at) const {
    if (at >= text_.size() || text_[at] != '"') {
      return std::nullopt;
    }
    for (std::size_t i = at + 1; i < text_.size(); ++i) {
      const auto c = static_cast<unsigned char>(text_[i]);
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is, cannot close the string
      } else if (c == '"') {
        return i + 1;
      } else if (c < 0x20) {
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  // An object or array: brackets counted outside strings, down to depth 0.
  [[nodiscard]] bool skip_nested() {
    std::size_t depth = 0;
    std::size_t i = pos_;
    while (i < text_.size()) {
      const char c = text_[i];
      if (c == '"') {
        const auto end = string_end(i);
        if (!end) {
          return false;
        }
        i = *end;
        continue;
      }
      if (c == '{' || c == '[') {
        if (++depth > kAlipayAnswerDepthMax) {
          return false;
        }
      } else if (c == '}' || c == ']') {
        if (--depth == 0) {
          pos_ = i + 1;
          return true;
        }
      }
      ++i;
    }
    return false;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

std::string quoted_code(const std::string* code) {
  return code == nullptr ? std::string("?") : codec::log_safe_code(*code);
}

// An answer that is not the query's success: a payment Alipay does not know, or an error.
Result<QueryAnswer> answer_for_error(const json& doc, const std::string* code,
                                     const QueryTarget& target) {
  const std::string* sub_code = codec::json_string(doc, "sub_code", kAlipayMaxValueBytes);
  if (code != nullptr && *code == kCodeBusinessFailed && sub_code != nullptr &&
      *sub_code == kSubCodeTradeNotExist) {
    const std::string* out_trade_no = codec::json_string(doc, "out_trade_no", codec::kMaxIdBytes);
    if (doc.contains("out_trade_no") &&
        (out_trade_no == nullptr || *out_trade_no != target.payment_no)) {
      return rejected_answer("the not-found answer names another payment");
    }
    return QueryAnswer{QueryState::not_found, {}, {}};
  }
  return rejected_answer("Alipay answered code " + quoted_code(code) + " sub_code " +
                         quoted_code(sub_code));
}

std::optional<QueryState> alipay_state_of(std::string_view trade_status) {
  if (trade_status == "TRADE_SUCCESS" || trade_status == "TRADE_FINISHED") {
    return QueryState::paid;
  }
  if (trade_status == "WAIT_BUYER_PAY") {
    return QueryState::pending;
  }
  if (trade_status == "TRADE_CLOSED") {
    return QueryState::failed;
  }
  return std::nullopt;
}

// trade_no and total_amount: required for paid, checked whenever present.
Result<void> read_alipay_answer(const json& doc, const QueryTarget& target, QueryAnswer& answer) {
  const bool paid = answer.state == QueryState::paid;
  if (doc.contains("trade_no")) {
    const std::string* trade_no = codec::json_string(doc, "trade_no", codec::kMaxIdBytes);
    if (trade_no == nullptr || !codec::is_valid_id(*trade_no)) {
      return rejected_answer("trade_no is not a valid id");
    }
    answer.trade_no = *trade_no;
  } else if (paid) {
    return rejected_answer("trade_no missing from a paid answer");
  }
  if (doc.contains("total_amount")) {
    const std::string* amount = codec::json_string(doc, "total_amount", kAlipayMaxValueBytes);
    answer.amount_cents = amount == nullptr ? std::nullopt : parse_yuan_to_cents(*amount);
    if (!answer.amount_cents) {
      return rejected_answer("total_amount is not yuan with at most 2 decimals");
    }
    if (*answer.amount_cents != target.amount_cents) {
      return rejected_answer("total_amount differs from the payment's amount");
    }
  } else if (paid) {
    return rejected_answer("total_amount missing from a paid answer");
  }
  return {};
}

}  // namespace

std::optional<std::string_view> raw_json_member(std::string_view text, std::string_view name) {
  Scanner scan(text);
  scan.skip_space();
  if (!scan.eat('{')) {
    return std::nullopt;
  }
  scan.skip_space();
  std::optional<std::string_view> found;
  if (scan.eat('}')) {
    return std::nullopt;
  }
  for (std::size_t members = 1;; ++members) {
    if (members > kAlipayAnswerMembersMax) {
      return std::nullopt;
    }
    const auto key = scan.string_token();
    scan.skip_space();
    if (!key || !scan.eat(':')) {
      return std::nullopt;
    }
    scan.skip_space();
    const auto value = scan.value();
    if (!value) {
      return std::nullopt;
    }
    if (*key == name) {
      if (found) {
        return std::nullopt;  // which of the two would the signature cover?
      }
      found = value;
    }
    scan.skip_space();
    if (scan.eat('}')) {
      break;
    }
    if (!scan.eat(',')) {
      return std::nullopt;
    }
    scan.skip_space();
  }
  scan.skip_space();
  if (!scan.at_end()) {
    return std::nullopt;
  }
  return found;
}

std::string alipay_yuan(std::int64_t cents) {
  const std::string fraction = std::to_string(100 + cents % 100).substr(1);
  return std::to_string(cents / 100) + "." + fraction;
}

FormParams alipay_openapi_params(std::string_view app_id, std::string_view method,
                                 std::string biz_content, std::int64_t now_ms) {
  return FormParams{
      {"app_id", std::string(app_id)},
      {"method", std::string(method)},
      {"format", "JSON"},
      {"charset", "utf-8"},
      {"sign_type", "RSA2"},
      {"timestamp", codec::china_time(now_ms, false)},
      {"version", "1.0"},
      {"biz_content", std::move(biz_content)},
  };
}

FormParams alipay_query_params(std::string_view app_id, std::string_view payment_no,
                               std::int64_t now_ms) {
  const json biz_content = {{"out_trade_no", std::string(payment_no)}};
  // Replace rather than throw should a payment number ever hold invalid UTF-8.
  return alipay_openapi_params(app_id, kAlipayQueryMethod,
                               biz_content.dump(-1, ' ', false, json::error_handler_t::replace),
                               now_ms);
}

std::string alipay_request_sign_content(const FormParams& params) {
  AlipayForm form;
  for (const auto& [key, value] : params) {
    if (key != "sign") {
      form.signed_params.push_back(FormParam{key, value});
    }
  }
  std::sort(form.signed_params.begin(), form.signed_params.end(),
            [](const FormParam& a, const FormParam& b) { return a.key < b.key; });
  return alipay_sign_content(form);
}

Result<QueryAnswer> alipay_query_answer_from(std::string_view response_json,
                                             const QueryTarget& target) {
  const json doc = json::parse(response_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("alipay_trade_query_response is not a JSON object");
  }
  const std::string* code = codec::json_string(doc, "code", kAlipayMaxValueBytes);
  if (code == nullptr || *code != kAlipayCodeSuccess) {
    return answer_for_error(doc, code, target);
  }
  const std::string* out_trade_no = codec::json_string(doc, "out_trade_no", codec::kMaxIdBytes);
  if (out_trade_no == nullptr || *out_trade_no != target.payment_no) {
    return rejected_answer("out_trade_no missing or another payment's");
  }
  const std::string* trade_status = codec::json_string(doc, "trade_status", kAlipayMaxValueBytes);
  const auto state = trade_status == nullptr ? std::nullopt : alipay_state_of(*trade_status);
  if (!state) {
    return rejected_answer("trade_status missing or not one Alipay documents");
  }
  QueryAnswer answer{*state, {}, {}};
  if (auto read = read_alipay_answer(doc, target, answer); !read.ok()) {
    return std::move(read).failure();
  }
  return answer;
}

void check_alipay_query_config(const AlipayQueryConfig& config, const char* who) {
  if (config.app_id.empty() || config.gateway.host.empty()) {
    throw std::invalid_argument(std::string(who) + ": empty app id or gateway host");
  }
  if (!config.app_private_key || !config.alipay_public_key) {
    throw std::invalid_argument(std::string(who) + ": no app private key or no Alipay public key");
  }
}

AlipayQuery::AlipayQuery(AlipayQueryConfig config) : config_(std::move(config)) {
  check_alipay_query_config(config_, "alipay query");
}

net::Request alipay_signed_request(const AlipayQueryConfig& config, const FormParams& params) {
  const std::string sign = codec::base64_encode(
      codec::rsa_sha256_sign(config.app_private_key.get(), alipay_request_sign_content(params)));
  net::Request request;
  request.method = "POST";
  request.url = config.gateway;
  request.headers = {{"Content-Type", "application/x-www-form-urlencoded;charset=utf-8"},
                     {"Accept", "application/json"}};
  for (const auto& [key, value] : params) {
    request.body.append(codec::form_encode(key))
        .append("=")
        .append(codec::form_encode(value))
        .append("&");
  }
  request.body.append("sign=").append(codec::form_encode(sign));
  return request;
}

Result<std::string_view> alipay_verified_member(const net::Response& response,
                                                std::string_view member,
                                                EVP_PKEY* alipay_public_key) {
  if (response.status != 200) {
    return rejected_answer("unexpected HTTP status " + std::to_string(response.status));
  }
  if (response.body.empty() || response.body.size() > kGatewayBodyBytesMax) {
    return rejected_answer("answer empty or too large");
  }
  if (!json::accept(response.body)) {
    return rejected_answer("answer is not JSON");
  }
  const auto raw = raw_json_member(response.body, member);
  if (!raw) {
    return rejected_answer(raw_json_member(response.body, kAlipayErrorResponseMember)
                               ? std::string("Alipay answered error_response")
                               : std::string(member) + " missing, repeated or not scannable");
  }
  const auto raw_sign = raw_json_member(response.body, "sign");
  const json sign = raw_sign ? json::parse(*raw_sign, nullptr, false) : json();
  if (!sign.is_string()) {
    return rejected_answer("sign missing or not a string");
  }
  const auto signature =
      codec::base64_decode(sign.get_ref<const std::string&>(), kAlipayMaxSignatureBytes);
  if (!signature) {
    return rejected_answer("sign is not base64");
  }
  const std::array<std::string_view, 1> pieces{*raw};
  if (!codec::rsa_sha256_verify(alipay_public_key, pieces, *signature)) {
    return rejected_answer("signature does not verify");
  }
  return *raw;
}

net::Request AlipayQuery::request(const QueryTarget& target, std::int64_t now_ms) const {
  return alipay_signed_request(config_,
                               alipay_query_params(config_.app_id, target.payment_no, now_ms));
}

Result<QueryAnswer> AlipayQuery::answer(const QueryTarget& target, const net::Response& response,
                                        std::int64_t /*now_ms*/) const {
  const auto raw =
      alipay_verified_member(response, kAlipayQueryResponseMember, config_.alipay_public_key.get());
  if (!raw.ok()) {
    return raw.failure();
  }
  return alipay_query_answer_from(raw.value(), target);
}

}  // namespace seatflow::channels

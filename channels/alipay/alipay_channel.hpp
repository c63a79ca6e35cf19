// The `alipay` dialect (SPEC §5): form-encoded notify, RSA2 over the sorted params, ACK "success".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "channels/channel.hpp"
#include "codec/crypto.hpp"

namespace seatflow::channels {

// The `code` of a successful Alipay gateway answer (alipay.trade.query, alipay.trade.refund).
inline constexpr std::string_view kAlipayCodeSuccess = "10000";

// What start-up reads from SEATFLOW_ALIPAY_*; make_alipay_channel loads the key file.
struct AlipayConfig {
  std::string app_id;           // must equal the notify's app_id
  std::string seller_id;        // when not empty, must equal the notify's seller_id
  std::string public_key_path;  // PEM: Alipay's public key (BEGIN PUBLIC KEY)
};

// Bounds on attacker-controlled input; anything beyond is malformed (400).
inline constexpr std::size_t kAlipayMaxParams = 64;
inline constexpr std::size_t kAlipayMaxKeyBytes = 64;
inline constexpr std::size_t kAlipayMaxValueBytes = 4096;      // after URL-decoding
inline constexpr std::size_t kAlipayMaxSignatureBytes = 1024;  // RSA up to 8192 bits

enum class FormCharset : std::uint8_t { utf8, gbk };

struct FormParam {
  std::string key;    // URL-decoded; [A-Za-z0-9_] only
  std::string value;  // URL-decoded bytes, still in the form's charset
};

// A notify body split into its parameters; nothing here is verified yet.
struct AlipayForm {
  std::vector<FormParam> signed_params;  // every param but sign/sign_type, sorted by key bytes
  std::string sign;                      // URL-decoded base64 text; "" when absent
  std::optional<std::string> sign_type;  // absent when the form has none
  FormCharset charset = FormCharset::utf8;

  // The value of a signed param (in the form's charset), nullptr when absent.
  [[nodiscard]] const std::string* find(std::string_view key) const;
};

// Splits a raw application/x-www-form-urlencoded body by hand: "&"-separated "k=v" pairs, each
// side URL-decoded, keys unique. The `charset` param (UTF-8 when absent; "utf-8"/"utf8",
// "gbk"/"gb2312" in any case) names the charset of the decoded bytes. Malformed on anything else.
[[nodiscard]] Result<AlipayForm> parse_alipay_form(std::string_view body);

// The signed content: "k=v" for every signed param, sorted, joined with "&". The bytes are the
// URL-decoded bytes as sent, i.e. in the form's charset — for a GBK form this is exactly what
// Alipay's SDK signs (the decoded string encoded back in that charset), so no re-encoding step
// can change what is verified.
[[nodiscard]] std::string alipay_sign_content(const AlipayForm& form);

// "50.00" -> 5000: yuan with at most two decimals, parsed digit by digit (never a float). Digits
// only, an optional "." followed by one or two digits, at most 15 integer digits. nullopt for
// anything else ("", "-1.00", "1e3", "50.", ".5", "50.001", "+1", " 1").
[[nodiscard]] std::optional<std::int64_t> parse_yuan_to_cents(std::string_view text);

// The checks that follow a valid signature: values decoded from the form's charset, app_id
// (and seller_id) matched, ids and amount read, trade_status mapped. Exposed for tests and fuzzing.
struct AlipayRules {
  std::string app_id;
  std::string seller_id;  // empty: not checked
};
[[nodiscard]] Result<domain::VerifiedCallback> alipay_callback_from_form(const AlipayForm& form,
                                                                         const AlipayRules& rules);

// Verifies with one shared Alipay public key; verify() is thread-safe and never logs.
class AlipayChannel final : public Channel {
 public:
  // Throws std::invalid_argument for a null key or an empty app id.
  AlipayChannel(AlipayRules rules, codec::SharedKey public_key);

  [[nodiscard]] domain::Channel id() const override { return domain::Channel::alipay; }
  [[nodiscard]] Result<domain::VerifiedCallback> verify(
      const InboundRequest& request) const override;
  [[nodiscard]] std::string_view ack_body() const override { return "success"; }
  [[nodiscard]] std::string_view content_type() const override { return "text/plain"; }
  // Anything but "success" makes Alipay retry; "fail: <reason>" helps whoever reads it.
  [[nodiscard]] std::string failure_body(std::string_view message) const override;

 private:
  AlipayRules rules_;
  codec::SharedKey public_key_;
};

// Loads the public key file; errc::bad_config with a one-line reason when it cannot be used.
[[nodiscard]] Result<std::unique_ptr<Channel>> make_alipay_channel(const AlipayConfig& config);

}  // namespace seatflow::channels

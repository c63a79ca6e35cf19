// Unit tests for the `alipay` channel (SPEC §5): form parsing, RSA2, GBK, amounts, rejections.
#include "channels/alipay/alipay_channel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "channels/gateway_signer.hpp"
#include "codec/digest.hpp"
#include "codec/text.hpp"
#include "support/test_keys.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using testing::test_key;

constexpr std::int64_t kNow = 1'700'000'000'000;
const std::string kAppId = "2021000000000001";

std::string repeat(char c, std::size_t count) {
  return std::string(count, c);
}

AlipayNotice notice(std::string trade_status = "TRADE_SUCCESS") {
  AlipayNotice n;
  n.app_id = kAppId;
  n.notify_id = "notify-0001";
  n.out_trade_no = "P-0001";
  n.trade_no = "2024010122001400001";
  n.trade_status = std::move(trade_status);
  n.total_amount = "50.00";
  return n;
}

std::string signed_body(const AlipayNotice& n, const std::string& key = "alipay") {
  return alipay_signed_form(alipay_notice_params(n, kNow), test_key(key).private_key.get());
}

AlipayChannel make_channel(std::string seller_id = {}) {
  return AlipayChannel(AlipayRules{kAppId, std::move(seller_id)}, test_key("alipay").public_key);
}

Result<domain::VerifiedCallback> verify(const AlipayChannel& channel, std::string_view body) {
  const codec::Headers headers{{"content-type", "application/x-www-form-urlencoded"}};
  return channel.verify(InboundRequest{body, &headers, kNow});
}

std::optional<RejectReason> reason_of(const Result<domain::VerifiedCallback>& result) {
  return result.ok() ? std::nullopt : std::optional(errc_of(result.error()));
}

std::string detail_of(const Result<domain::VerifiedCallback>& result) {
  return result.ok() ? std::string("verified") : result.detail();
}

// The form body signed by hand over `content`, for shapes the signer would never produce.
std::string body_signed_over(const std::string& form_without_sign, const std::string& content) {
  const auto sign =
      codec::base64_encode(codec::rsa_sha256_sign(test_key("alipay").private_key.get(), content));
  return form_without_sign + "&sign=" + codec::form_encode(sign) + "&sign_type=RSA2";
}

// ---- Amounts -------------------------------------------------------------------------------

TEST(AlipayAmount, ParsesYuanExactlyIntoCents) {
  EXPECT_EQ(parse_yuan_to_cents("50.00"), 5000);
  EXPECT_EQ(parse_yuan_to_cents("0.01"), 1);
  EXPECT_EQ(parse_yuan_to_cents("50"), 5000);
  EXPECT_EQ(parse_yuan_to_cents("50.1"), 5010);
  EXPECT_EQ(parse_yuan_to_cents("0"), 0);
  EXPECT_EQ(parse_yuan_to_cents("19.99"), 1999);
  // 0.29 and 1.15 are classic float traps (0.29 * 100 = 28.999...).
  EXPECT_EQ(parse_yuan_to_cents("0.29"), 29);
  EXPECT_EQ(parse_yuan_to_cents("1.15"), 115);
  EXPECT_EQ(parse_yuan_to_cents("999999999999999.99"), 99'999'999'999'999'999);
}

TEST(AlipayAmount, RejectsEverythingElse) {
  for (const std::string_view text :
       {"50.001", "-1.00", "1e3", "", "+1.00", " 1.00", "1.00 ", "50.", ".5", "1,00", "0x10",
        "1.0.0", "١٢", "NaN", "inf", "1000000000000000.00", "99999999999999999999"}) {
    EXPECT_EQ(parse_yuan_to_cents(text), std::nullopt) << "'" << text << "'";
  }
}

// ---- Accepted callbacks --------------------------------------------------------------------

TEST(AlipayChannel, SignedSuccessCarriesTheFields) {
  const auto channel = make_channel();
  const auto result = verify(channel, signed_body(notice()));
  ASSERT_TRUE(result.ok()) << detail_of(result);
  const auto& callback = result.value();
  EXPECT_EQ(callback.callback_id, "notify-0001");
  EXPECT_EQ(callback.payment_no, "P-0001");
  EXPECT_EQ(callback.channel_trade_no, "2024010122001400001");
  EXPECT_EQ(callback.channel, domain::Channel::alipay);
  EXPECT_EQ(callback.kind, domain::CallbackKind::success);
  EXPECT_EQ(callback.amount_cents, 5000);
  EXPECT_EQ(callback.payload_sha256, codec::business_digest(callback));
}

TEST(AlipayChannel, TradeStatusMapsToKinds) {
  const auto channel = make_channel();
  const std::vector<std::pair<std::string, domain::CallbackKind>> cases = {
      {"TRADE_SUCCESS", domain::CallbackKind::success},
      {"TRADE_FINISHED", domain::CallbackKind::success},
      {"TRADE_CLOSED", domain::CallbackKind::failure},
      {"WAIT_BUYER_PAY", domain::CallbackKind::other},
      {"SOMETHING_NEW", domain::CallbackKind::other},
  };
  for (const auto& [status, kind] : cases) {
    const auto result = verify(channel, signed_body(notice(status)));
    ASSERT_TRUE(result.ok()) << status;
    EXPECT_EQ(result.value().kind, kind) << status;
  }
}

TEST(AlipayChannel, ClosedTradeWithoutTradeNoOrAmountIsAFailure) {
  auto n = notice("TRADE_CLOSED");
  n.trade_no.clear();
  n.total_amount.clear();
  const auto result = verify(make_channel(), signed_body(n));
  ASSERT_TRUE(result.ok()) << detail_of(result);
  const auto& callback = result.value();
  EXPECT_EQ(callback.kind, domain::CallbackKind::failure);
  EXPECT_FALSE(callback.amount_cents.has_value());
  EXPECT_TRUE(callback.channel_trade_no.empty());
}

TEST(AlipayChannel, SameBodyVerifiesTwiceIdentically) {
  const auto channel = make_channel();
  const auto body = signed_body(notice());
  const auto first = verify(channel, body);
  const auto second = verify(channel, body);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(second.ok());
  const auto& a = first.value();
  const auto& b = second.value();
  EXPECT_EQ(a.callback_id, b.callback_id);
  EXPECT_EQ(a.payload_sha256, b.payload_sha256);
  EXPECT_EQ(a.amount_cents, b.amount_cents);
}

TEST(AlipayChannel, ParameterOrderInTheBodyDoesNotMatter) {
  const auto channel = make_channel();
  auto params = alipay_notice_params(notice(), kNow);
  std::reverse(params.begin(), params.end());
  const auto body = alipay_signed_form(params, test_key("alipay").private_key.get());
  EXPECT_EQ(reason_of(verify(channel, body)), std::nullopt);
}

TEST(AlipayChannel, AmountVariantsReachTheCallbackExactly) {
  const auto channel = make_channel();
  for (const auto& [text, cents] : std::vector<std::pair<std::string, std::int64_t>>{
           {"0.01", 1}, {"50", 5000}, {"50.1", 5010}, {"123456.78", 12'345'678}}) {
    auto n = notice();
    n.total_amount = text;
    const auto result = verify(channel, signed_body(n));
    ASSERT_TRUE(result.ok()) << text;
    EXPECT_EQ(result.value().amount_cents, cents) << text;
  }
}

TEST(AlipayChannel, PlusAndPercentEscapesAreDecodedBeforeSigning) {
  auto n = notice();
  n.extra = {{"subject", "Seat A1 & A2 = 100% (VIP)"}, {"body", "line+plus"}};
  const auto body = signed_body(n);
  EXPECT_NE(body.find("subject=Seat+A1+%26+A2+%3D+100%25+%28VIP%29"), std::string::npos) << body;
  EXPECT_EQ(reason_of(verify(make_channel(), body)), std::nullopt);
}

TEST(AlipayChannel, SellerIdIsCheckedOnlyWhenConfigured) {
  auto n = notice();
  n.seller_id = "2088000000000001";
  const auto body = signed_body(n);
  EXPECT_EQ(reason_of(verify(make_channel(), body)), std::nullopt);
  EXPECT_EQ(reason_of(verify(make_channel("2088000000000001"), body)), std::nullopt);
  EXPECT_EQ(reason_of(verify(make_channel("2088999999999999"), body)), RejectReason::unusable);
  EXPECT_EQ(reason_of(verify(make_channel("2088000000000001"), signed_body(notice()))),
            RejectReason::unusable)
      << "a configured seller_id must be present";
}

// ---- GBK -----------------------------------------------------------------------------------

// Alipay's SDK decodes the form with its charset, joins the sorted params and signs
// content.getBytes(charset): for charset=GBK the signed bytes are GBK. The channel verifies over
// the URL-decoded bytes exactly as sent (no decode/re-encode round trip), then converts to UTF-8.
TEST(AlipayChannel, GbkFormIsSignedOverGbkBytesAndDecodedToUtf8) {
  auto n = notice();
  n.charset = "GBK";
  n.extra = {{"subject", "\xE6\xB5\x8B\xE8\xAF\x95"}};  // 测试 in UTF-8
  const auto body = signed_body(n);
  EXPECT_NE(body.find("subject=%B2%E2%CA%D4"), std::string::npos) << "GBK bytes of 测试: " << body;

  const auto parsed = parse_alipay_form(body);
  ASSERT_TRUE(parsed.ok());
  const auto& form = parsed.value();
  EXPECT_EQ(form.charset, FormCharset::gbk);
  ASSERT_NE(form.find("subject"), nullptr);
  EXPECT_EQ(*form.find("subject"), "\xB2\xE2\xCA\xD4");
  EXPECT_EQ(codec::gbk_to_utf8(*form.find("subject")), "\xE6\xB5\x8B\xE8\xAF\x95");

  const auto result = verify(make_channel(), body);
  ASSERT_TRUE(result.ok()) << detail_of(result);
  EXPECT_EQ(result.value().amount_cents, 5000);
}

TEST(AlipayChannel, GbkFormSignedOverUtf8BytesDoesNotVerify) {
  // The same params, but signed over the UTF-8 text while the body carries GBK bytes.
  auto n = notice();
  n.charset = "gbk";
  n.extra = {{"subject", "\xE6\xB5\x8B\xE8\xAF\x95"}};
  auto params = alipay_notice_params(n, kNow);
  std::sort(params.begin(), params.end());
  std::string content;
  std::string form;
  for (const auto& [key, value] : params) {
    content += (content.empty() ? "" : "&") + key + "=" + value;
    const auto bytes = key == "subject" ? *codec::utf8_to_gbk(value) : value;
    form += (form.empty() ? "" : "&") + key + "=" + codec::form_encode(bytes);
  }
  EXPECT_EQ(reason_of(verify(make_channel(), body_signed_over(form, content))),
            RejectReason::bad_signature);
}

TEST(AlipayChannel, SignedValueThatIsNotValidInItsCharsetIsMalformed) {
  const std::string utf8_form = "app_id=" + kAppId +
                                "&notify_id=n1&out_trade_no=P-1&subject=%FF%FE"
                                "&total_amount=50.00&trade_no=T1&trade_status=TRADE_SUCCESS";
  const std::string utf8_content = "app_id=" + kAppId +
                                   "&notify_id=n1&out_trade_no=P-1&subject=\xFF\xFE"
                                   "&total_amount=50.00&trade_no=T1&trade_status=TRADE_SUCCESS";
  const auto utf8 = verify(make_channel(), body_signed_over(utf8_form, utf8_content));
  EXPECT_EQ(reason_of(utf8), RejectReason::unusable) << detail_of(utf8);

  // 0xFF is no GBK lead byte.
  const std::string gbk_form = "app_id=" + kAppId +
                               "&charset=gbk&notify_id=n1&out_trade_no=P-1&subject=%FF%FF"
                               "&total_amount=50.00&trade_no=T1&trade_status=TRADE_SUCCESS";
  const std::string gbk_content = "app_id=" + kAppId +
                                  "&charset=gbk&notify_id=n1&out_trade_no=P-1&subject=\xFF\xFF"
                                  "&total_amount=50.00&trade_no=T1&trade_status=TRADE_SUCCESS";
  const auto gbk = verify(make_channel(), body_signed_over(gbk_form, gbk_content));
  EXPECT_EQ(reason_of(gbk), RejectReason::unusable) << detail_of(gbk);
}

// ---- Signature rejections (401) ------------------------------------------------------------

TEST(AlipayChannel, TamperedByteIsBadSignature) {
  const auto body = signed_body(notice());
  const auto at = body.find("total_amount=50.00");
  ASSERT_NE(at, std::string::npos);
  auto tampered = body;
  tampered[at + std::string_view("total_amount=").size()] = '9';
  EXPECT_EQ(reason_of(verify(make_channel(), tampered)), RejectReason::bad_signature);

  // Flip one character of the signature itself.
  auto bad_sign = body;
  const auto sign_at = bad_sign.find("sign=") + 10;
  bad_sign[sign_at] = bad_sign[sign_at] == 'A' ? 'B' : 'A';
  EXPECT_EQ(reason_of(verify(make_channel(), bad_sign)), RejectReason::bad_signature);
}

TEST(AlipayChannel, WrongKeyIsBadSignature) {
  EXPECT_EQ(reason_of(verify(make_channel(), signed_body(notice(), "someone-else"))),
            RejectReason::bad_signature);
}

TEST(AlipayChannel, AddedParameterIsBadSignature) {
  const auto body = signed_body(notice()) + "&extra_param=1";
  EXPECT_EQ(reason_of(verify(make_channel(), body)), RejectReason::bad_signature);
}

TEST(AlipayChannel, MissingOrUnusableSignIsBadSignature) {
  const auto body = signed_body(notice());
  const auto without_sign = body.substr(0, body.find("&sign="));
  EXPECT_EQ(reason_of(verify(make_channel(), without_sign)), RejectReason::bad_signature);
  EXPECT_EQ(reason_of(verify(make_channel(), without_sign + "&sign=")),
            RejectReason::bad_signature);
  EXPECT_EQ(reason_of(verify(make_channel(), without_sign + "&sign=not*base64")),
            RejectReason::bad_signature);
  EXPECT_EQ(reason_of(verify(make_channel(), without_sign + "&sign=" + repeat('A', 4000))),
            RejectReason::bad_signature);
  auto rsa1 = body;
  rsa1.replace(rsa1.find("sign_type=RSA2"), 14, "sign_type=RSA");
  EXPECT_EQ(reason_of(verify(make_channel(), rsa1)), RejectReason::bad_signature);
}

// ---- Content rejections after a valid signature (400) ---------------------------------------

TEST(AlipayChannel, AppIdMismatchIsMalformed) {
  auto n = notice();
  n.app_id = "2021999999999999";
  const auto result = verify(make_channel(), signed_body(n));
  EXPECT_EQ(reason_of(result), RejectReason::unusable);
  EXPECT_EQ(detail_of(result).find("2021999999999999"), std::string::npos)
      << "details never echo values";
}

TEST(AlipayChannel, BadAmountAfterAValidSignatureIsMalformed) {
  for (const std::string amount : {"50.001", "-1.00", "1e3", "99999999999999999999"}) {
    auto n = notice();
    n.total_amount = amount;
    EXPECT_EQ(reason_of(verify(make_channel(), signed_body(n))), RejectReason::unusable) << amount;
  }
  auto missing = notice();
  missing.total_amount.clear();
  EXPECT_EQ(reason_of(verify(make_channel(), signed_body(missing))), RejectReason::unusable);
}

TEST(AlipayChannel, MissingOrOversizedIdsAreMalformed) {
  auto long_notify = notice();
  long_notify.notify_id = repeat('n', codec::kMaxIdBytes + 1);
  EXPECT_EQ(reason_of(verify(make_channel(), signed_body(long_notify))), RejectReason::unusable);
  auto at_limit = notice();
  at_limit.notify_id = repeat('n', codec::kMaxIdBytes);
  EXPECT_EQ(reason_of(verify(make_channel(), signed_body(at_limit))), std::nullopt);
  auto control = notice();
  control.out_trade_no = "P-1\nforged log line";
  EXPECT_EQ(reason_of(verify(make_channel(), signed_body(control))), RejectReason::unusable);
  auto no_trade_no = notice();
  no_trade_no.trade_no.clear();
  EXPECT_EQ(reason_of(verify(make_channel(), signed_body(no_trade_no))), RejectReason::unusable);
  auto no_payment = notice();
  no_payment.out_trade_no.clear();
  EXPECT_EQ(reason_of(verify(make_channel(), signed_body(no_payment))), RejectReason::unusable);
}

// ---- Parse rejections (400, before any signature work) -------------------------------------

TEST(AlipayForm, MalformedBodiesAreRejected) {
  const auto channel = make_channel();
  const std::vector<std::string> bodies = {
      "",
      "no-equals-sign",
      "a=1&b",
      "a=%G1",
      "a=%4",
      "a=1&a=2",
      "sign=x&sign=y",
      "sign_type=RSA2&sign_type=RSA2",
      "bad-key=1",
      "=value",
      "charset=latin1&a=1",
      repeat('k', kAlipayMaxKeyBytes + 1) + "=1",
      "a=" + repeat('v', kAlipayMaxValueBytes + 1),
  };
  for (const auto& body : bodies) {
    EXPECT_EQ(reason_of(verify(channel, body)), RejectReason::malformed) << body.substr(0, 40);
  }
}

TEST(AlipayForm, TooManyParamsOrTooLargeBodyAreRejected) {
  std::string body;
  for (std::size_t i = 0; i <= kAlipayMaxParams; ++i) {
    body += "k" + std::to_string(i) + "=v&";
  }
  EXPECT_EQ(reason_of(verify(make_channel(), body)), RejectReason::malformed);
  const std::string huge(kGatewayBodyBytesMax + 1, 'a');
  EXPECT_EQ(reason_of(verify(make_channel(), huge)), RejectReason::malformed);
}

TEST(AlipayForm, SplitsSortsAndSetsSignAside) {
  const auto parsed = parse_alipay_form("b=2&a=1+1&&sign=abc%3D&sign_type=RSA2&c=&charset=UTF-8&");
  ASSERT_TRUE(parsed.ok());
  const auto& form = parsed.value();
  EXPECT_EQ(form.sign, "abc=");
  EXPECT_EQ(form.sign_type, "RSA2");
  EXPECT_EQ(form.charset, FormCharset::utf8);
  EXPECT_EQ(alipay_sign_content(form), "a=1 1&b=2&c=&charset=UTF-8");
}

// ---- Channel surface -----------------------------------------------------------------------

TEST(AlipayChannel, AckAndFailureBodies) {
  const auto channel = make_channel();
  EXPECT_EQ(channel.ack_body(), "success");
  EXPECT_EQ(channel.content_type(), "text/plain");
  EXPECT_EQ(channel.id(), domain::Channel::alipay);
  EXPECT_NE(channel.failure_body("bad"), "success");
}

TEST(AlipayChannel, VerifiesConcurrentlyFromSeveralThreads) {
  const auto channel = make_channel();
  const auto good = signed_body(notice());
  const auto bad = signed_body(notice(), "someone-else");
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (reason_of(verify(channel, good)) != std::nullopt ||
            reason_of(verify(channel, bad)) != RejectReason::bad_signature) {
          ++wrong;
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(wrong.load(), 0);
}

// ---- Factory -------------------------------------------------------------------------------

TEST(AlipayFactory, LoadsThePublicKeyFile) {
  const auto made =
      make_alipay_channel(AlipayConfig{kAppId, "", test_key("alipay").public_pem_path});
  ASSERT_TRUE(made.ok()) << made.detail();
  const auto& channel = made.value();
  EXPECT_EQ(reason_of(channel->verify(InboundRequest{signed_body(notice()), nullptr, kNow})),
            std::nullopt);
}

TEST(AlipayFactory, RefusesUnusableKeyFiles) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/nonexistent/alipay.pem", "cannot read"},
      {testing::write_temp_file("garbage.pem", "not a key\n"), "no PEM public key"},
      {test_key("alipay").private_pem_path, "no PEM public key"},
      {test_key("small", 1024).public_pem_path, "under 2048 bits"},
  };
  for (const auto& [path, expected] : cases) {
    const auto refused = make_alipay_channel(AlipayConfig{kAppId, "", path});
    ASSERT_FALSE(refused.ok()) << path;
    EXPECT_EQ(refused.error(), errc::bad_config);
    const auto& why = refused.detail();
    EXPECT_NE(why.find(expected), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
  EXPECT_EQ(make_alipay_channel(AlipayConfig{"", "", test_key("alipay").public_pem_path}).error(),
            errc::bad_config);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels

// Unit tests for the API's bearer-token/HS256-JWT Authenticator and its base64url helpers (SPEC
// §7).
#include "http/auth.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seatflow::http {

// Failure messages name the verdict instead of printing its byte.
void PrintTo(errc verdict, std::ostream* out) {
  *out << make_error_code(verdict).message();
}

namespace {
namespace SEATFLOW_UNITY_ID {

// An Authenticator's answer as the errc it refused with, success when it let the request in.
errc verdict(const Result<void>& checked) {
  return checked.ok() ? errc::success : errc_of(checked.error());
}

const std::string kToken = "unit-test-api-token-5d1c";
constexpr std::int64_t kNow = 1'700'000'000;
constexpr std::string_view kHs256Header = R"({"alg":"HS256","typ":"JWT"})";

// Computed outside the code under test, in the shell:
//   b64u(){ base64 -w0 | tr '+/' '-_' | tr -d '='; }
//   H=$(printf '%s' '{"alg":"HS256","typ":"JWT"}' | b64u)
//   P=$(printf '%s' '{"sub":"ops","iat":1700000000}' | b64u)
//   S=$(printf '%s' "$H.$P" | openssl dgst -sha256 -hmac 'unit-test-api-token-5d1c' -binary | b64u)
const std::string kShellJwt =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJvcHMiLCJpYXQiOjE3MDAwMDAwMDB9."
    "kN55n2Xu667yrK1EaKiWp3h1oSQuKUfoZWIuOVMj23c";
// The same, payload '{"sub":"ops","exp":1700000600}' (expires 600 s after kNow).
const std::string kShellJwtExp600 =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJvcHMiLCJleHAiOjE3MDAwMDA2MDB9."
    "WTavzwKU5WwXFm2QXCrIza8i-0rU5SnB-MhhrB-kKXM";
// Header keys in the other order ('{"typ":"JWT","alg":"HS256"}'), payload as kShellJwt.
const std::string kShellJwtOtherHeader =
    "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcHMiLCJpYXQiOjE3MDAwMDAwMDB9."
    "d4gdgdTGB47nE9hrePsJgBFS45xcZ1sGApUqbEp1HL8";
// The well-known jwt.io example, signed with "your-256-bit-secret".
const std::string kJwtIoExample =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";

// base64url without padding, written independently of the engine's bit-buffer loop: whole
// 3-byte groups, then the 1- or 2-byte tail.
std::string independent_b64url(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::size_t i = 0;
  const auto byte = [&](std::size_t at) { return static_cast<unsigned char>(bytes[at]); };
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t group = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out += kAlphabet[(group >> 18) & 63];
    out += kAlphabet[(group >> 12) & 63];
    out += kAlphabet[(group >> 6) & 63];
    out += kAlphabet[group & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const std::uint32_t group = byte(i) << 16;
    out += kAlphabet[(group >> 18) & 63];
    out += kAlphabet[(group >> 12) & 63];
  } else if (rest == 2) {
    const std::uint32_t group = (byte(i) << 16) | (byte(i + 1) << 8);
    out += kAlphabet[(group >> 18) & 63];
    out += kAlphabet[(group >> 12) & 63];
    out += kAlphabet[(group >> 6) & 63];
  }
  return out;
}

// HMAC-SHA256 with OpenSSL's one-shot API.
std::string independent_hmac(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &length);
  return {reinterpret_cast<const char*>(digest), length};
}

// A JWT with any header, signed HS256 by the independent implementation.
std::string independent_jwt(std::string_view secret, std::string_view header_json,
                            std::string_view payload_json) {
  std::string input = independent_b64url(header_json);
  input += '.';
  input += independent_b64url(payload_json);
  const auto signature = independent_b64url(independent_hmac(secret, input));
  return input + "." + signature;
}

std::string bearer(std::string_view credential) {
  std::string header = "Bearer ";
  header.append(credential);
  return header;
}

std::string with_time(std::string_view claim, std::int64_t value) {
  std::string payload = R"({"sub":"ops",")";
  payload.append(claim).append("\":").append(std::to_string(value)).append("}");
  return payload;
}

// A payload that expires a minute after kNow (JWTs must carry exp).
std::string live(std::string_view claims_without_brace = R"("sub":"ops")") {
  std::string payload = "{";
  payload.append(claims_without_brace).append(R"(,"exp":)").append(std::to_string(kNow + 60));
  return payload + "}";
}

constexpr std::int64_t kLifetimeMax = 3'600;

// The JWT key is the token here so that the shell-made fixtures (signed with it) stay valid: the
// configuration refuses that pairing, the Authenticator does not care.
const Authenticator& auth() {
  static const Authenticator instance(AuthSettings{kToken, kToken, kLifetimeMax});
  return instance;
}

errc check_jwt(const std::string& jwt, std::int64_t now = kNow) {
  return verdict(auth().check(bearer(jwt), now));
}

// The three dot-separated segments of a JWT.
struct Segments {
  std::string header;
  std::string payload;
  std::string signature;
};

Segments split(const std::string& jwt) {
  const auto first = jwt.find('.');
  const auto second = jwt.find('.', first + 1);
  return {jwt.substr(0, first), jwt.substr(first + 1, second - first - 1), jwt.substr(second + 1)};
}

// ---- bearer token -------------------------------------------------------------------------

TEST(Authenticator, ExactTokenIsOk) {
  EXPECT_EQ(verdict(auth().check(bearer(kToken), kNow)), errc::success);
}

TEST(Authenticator, WrongTokenIsInvalid) {
  EXPECT_EQ(verdict(auth().check(bearer("wrong-token"), kNow)), errc::bad_credentials);
  EXPECT_EQ(verdict(auth().check(bearer(kToken.substr(0, kToken.size() - 1)), kNow)),
            errc::bad_credentials);
  EXPECT_EQ(verdict(auth().check(bearer(kToken + "x"), kNow)), errc::bad_credentials);
  std::string flipped = kToken;
  flipped[0] = 'U';
  EXPECT_EQ(verdict(auth().check(bearer(flipped), kNow)), errc::bad_credentials);
  EXPECT_EQ(verdict(auth().check(bearer(" " + kToken), kNow)), errc::bad_credentials);
}

TEST(Authenticator, MissingEmptyOrOtherSchemeIsMissing) {
  EXPECT_EQ(verdict(auth().check("", kNow)), errc::missing_credentials);
  EXPECT_EQ(verdict(auth().check("Bearer ", kNow)), errc::missing_credentials);
  EXPECT_EQ(verdict(auth().check("Bearer", kNow)), errc::missing_credentials);
  EXPECT_EQ(verdict(auth().check("Basic x", kNow)), errc::missing_credentials);
  EXPECT_EQ(verdict(auth().check("Basic " + kToken, kNow)), errc::missing_credentials);
  EXPECT_EQ(verdict(auth().check(kToken, kNow)), errc::missing_credentials);
}

TEST(Authenticator, SchemeNameIsCaseInsensitive) {
  EXPECT_EQ(verdict(auth().check("bearer " + kToken, kNow)), errc::success);
  EXPECT_EQ(verdict(auth().check("BEARER " + kToken, kNow)), errc::success);
  EXPECT_EQ(verdict(auth().check("bearer x" + kToken, kNow)), errc::bad_credentials);
}

TEST(Authenticator, OversizedCredentialIsRefusedWithoutComparing) {
  EXPECT_NE(verdict(auth().check(bearer(std::string(10'000, 'a')), kNow)), errc::success);
}

TEST(Authenticator, EmptyConfiguredTokenDisablesTheApi) {
  const Authenticator disabled{AuthSettings{}};
  EXPECT_EQ(verdict(disabled.check("", kNow)), errc::api_disabled);
  EXPECT_EQ(verdict(disabled.check("Bearer ", kNow)), errc::api_disabled);
  EXPECT_EQ(verdict(disabled.check(bearer("anything"), kNow)), errc::api_disabled);
  // A JWT "signed" with the empty key must not get in either.
  EXPECT_EQ(verdict(disabled.check(bearer(sign_jwt_hs256("", R"({"sub":"ops"})")), kNow)),
            errc::api_disabled);
}

// ---- HS256 JWT ----------------------------------------------------------------------------

TEST(Jwt, SignJwtHs256IsAccepted) {
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, live())), errc::success);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, with_time("exp", kNow + 1))), errc::success);
}

TEST(Jwt, WithoutExpIsInvalid) {
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, R"({"sub":"ops"})")), errc::bad_credentials);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, "{}")), errc::bad_credentials);
  EXPECT_EQ(check_jwt(kShellJwt), errc::bad_credentials) << "iat only";
  EXPECT_EQ(check_jwt(kShellJwtOtherHeader), errc::bad_credentials);
  const Authenticator jwt_io(AuthSettings{"some-bearer-token", "your-256-bit-secret", 3'600});
  EXPECT_EQ(verdict(jwt_io.check(bearer(kJwtIoExample), kNow)), errc::bad_credentials);
}

TEST(Jwt, ExpiringFurtherAheadThanTheLifetimeBoundIsInvalid) {
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, with_time("exp", kNow + kLifetimeMax))),
            errc::success);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, with_time("exp", kNow + kLifetimeMax + 1))),
            errc::bad_credentials);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, with_time("exp", 9'999'999'999))),
            errc::bad_credentials);
}

TEST(Jwt, OnlyTheJwtKeySignsAndNoKeyRefusesEveryJwt) {
  const std::string jwt_key = "unit-test-jwt-key-of-its-own-8c2e";
  const Authenticator own_key(AuthSettings{kToken, jwt_key, kLifetimeMax});
  EXPECT_EQ(verdict(own_key.check(bearer(sign_jwt_hs256(jwt_key, live())), kNow)), errc::success);
  EXPECT_EQ(verdict(own_key.check(bearer(sign_jwt_hs256(kToken, live())), kNow)),
            errc::bad_credentials)
      << "the bearer token must not mint JWTs";
  EXPECT_EQ(verdict(own_key.check(bearer(kToken), kNow)), errc::success);
  const Authenticator no_key(AuthSettings{kToken, "", kLifetimeMax});
  EXPECT_EQ(verdict(no_key.check(bearer(sign_jwt_hs256(kToken, live())), kNow)),
            errc::bad_credentials);
  EXPECT_EQ(verdict(no_key.check(bearer(sign_jwt_hs256("", live())), kNow)), errc::bad_credentials);
  EXPECT_EQ(verdict(no_key.check(bearer(kToken), kNow)), errc::success);
}

TEST(Jwt, SignJwtHs256MatchesTheIndependentImplementationAndTheShell) {
  const std::string payload = R"({"sub":"ops","iat":1700000000})";
  EXPECT_EQ(sign_jwt_hs256(kToken, payload), independent_jwt(kToken, kHs256Header, payload));
  EXPECT_EQ(sign_jwt_hs256(kToken, payload), kShellJwt);
  EXPECT_EQ(independent_jwt(kToken, kHs256Header, payload), kShellJwt);
  EXPECT_EQ(independent_jwt("your-256-bit-secret", kHs256Header,
                            R"({"sub":"1234567890","name":"John Doe","iat":1516239022})"),
            kJwtIoExample);
}

TEST(Jwt, IndependentlySignedJwtIsAccepted) {
  EXPECT_EQ(check_jwt(independent_jwt(kToken, kHs256Header, live())), errc::success);
  EXPECT_EQ(check_jwt(independent_jwt(kToken, R"({"typ":"JWT","alg":"HS256"})", live())),
            errc::success);
}

TEST(Jwt, HardCodedShellJwtWithExpIsAccepted) {
  EXPECT_EQ(check_jwt(kShellJwtExp600), errc::success);
  EXPECT_EQ(check_jwt(kShellJwtExp600, 1'700'000'599), errc::success);
  EXPECT_EQ(check_jwt(kShellJwtExp600, 1'700'000'600), errc::bad_credentials);
  // Signed with a different key.
  EXPECT_EQ(check_jwt(kJwtIoExample), errc::bad_credentials);
}

TEST(Jwt, SignedWithAnotherSecretIsInvalid) {
  EXPECT_EQ(check_jwt(sign_jwt_hs256("another-secret", live())), errc::bad_credentials);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken + "x", live())), errc::bad_credentials);
}

TEST(Jwt, TamperedPayloadHeaderOrSignatureIsInvalid) {
  const auto parts = split(kShellJwt);
  ASSERT_FALSE(parts.signature.empty());
  // Payload swapped for one with more rights, signature kept.
  const auto admin = independent_b64url(R"({"sub":"admin","iat":1700000000})");
  EXPECT_EQ(check_jwt(parts.header + "." + admin + "." + parts.signature), errc::bad_credentials);
  // One payload character changed.
  auto payload = parts.payload;
  payload[4] = payload[4] == 'A' ? 'B' : 'A';
  EXPECT_EQ(check_jwt(parts.header + "." + payload + "." + parts.signature), errc::bad_credentials);
  // Header swapped (same meaning, different bytes): the signature covers the header bytes.
  const auto other_header = independent_b64url(R"({"alg":"HS256"})");
  EXPECT_EQ(check_jwt(other_header + "." + parts.payload + "." + parts.signature),
            errc::bad_credentials);
  // Signature: a changed leading character, truncated, extended, empty.
  auto signature = parts.signature;
  signature[0] = signature[0] == 'A' ? 'B' : 'A';
  EXPECT_EQ(check_jwt(parts.header + "." + parts.payload + "." + signature), errc::bad_credentials);
  EXPECT_EQ(check_jwt(parts.header + "." + parts.payload + "." +
                      parts.signature.substr(0, parts.signature.size() - 4)),
            errc::bad_credentials);
  EXPECT_EQ(check_jwt(kShellJwt + "AAAA"), errc::bad_credentials);
  EXPECT_EQ(check_jwt(parts.header + "." + parts.payload + "."), errc::bad_credentials);
}

TEST(Jwt, AlgNoneIsInvalid) {
  const std::string none_header = R"({"alg":"none","typ":"JWT"})";
  const auto unsigned_jwt =
      independent_b64url(none_header) + "." + independent_b64url(R"({"sub":"ops"})") + ".";
  EXPECT_EQ(check_jwt(unsigned_jwt), errc::bad_credentials);
  // Even with a correct HMAC over the "none" header.
  EXPECT_EQ(check_jwt(independent_jwt(kToken, none_header, R"({"sub":"ops"})")),
            errc::bad_credentials);
  EXPECT_EQ(check_jwt(independent_jwt(kToken, R"({"alg":"None"})", R"({"sub":"ops"})")),
            errc::bad_credentials);
}

// RFC 7515 §4.1.11 (SPEC §14): a `crit` header names extensions that must be understood; none is,
// so any `crit` refuses the token, even a correctly signed, live one.
TEST(Jwt, CritHeaderIsInvalidWhateverItsValue) {
  const auto claims = live();
  ASSERT_EQ(check_jwt(independent_jwt(kToken, R"({"alg":"HS256","typ":"JWT"})", claims)),
            errc::success);
  for (const std::string header :
       {R"({"alg":"HS256","typ":"JWT","crit":["exp"]})",
        R"({"alg":"HS256","crit":["b64"],"b64":false})", R"({"alg":"HS256","crit":[]})",
        R"({"alg":"HS256","crit":"x"})", R"({"alg":"HS256","crit":null})",
        R"({"crit":["http://example.com/ext"],"alg":"HS256"})"}) {
    EXPECT_EQ(check_jwt(independent_jwt(kToken, header, claims)), errc::bad_credentials) << header;
  }
}

TEST(Jwt, OtherAlgorithmsAndBadHeadersAreInvalid) {
  // HS512 header, even when the signature is the HS256 one over these bytes.
  EXPECT_EQ(check_jwt(independent_jwt(kToken, R"({"alg":"HS512","typ":"JWT"})", "{}")),
            errc::bad_credentials);
  // HS512 header with a real HMAC-SHA512 signature.
  const auto input = independent_b64url(R"({"alg":"HS512","typ":"JWT"})") + "." +
                     independent_b64url(R"({"sub":"ops"})");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha512(), kToken.data(), static_cast<int>(kToken.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest, &length);
  ASSERT_EQ(length, 64U);
  const std::string hs512_signature(reinterpret_cast<const char*>(digest), length);
  EXPECT_EQ(check_jwt(input + "." + independent_b64url(hs512_signature)), errc::bad_credentials);
  for (const std::string header : {R"({"alg":"hs256"})", R"({"alg":"RS256"})", R"({"typ":"JWT"})",
                                   R"(["HS256"])", "not json", ""}) {
    EXPECT_EQ(check_jwt(independent_jwt(kToken, header, R"({"sub":"ops"})")), errc::bad_credentials)
        << header;
  }
}

// Regression test (fixed in http/auth.cpp): a header whose "alg" is not a string makes
// check() throw nlohmann::json type_error 302 (from header_json.value("alg", "")) instead of
// answering invalid. The alg check runs before the signature check, so no secret is needed: over
// HTTP any client gets 500 "internal error" (and an error log line) instead of 401.
TEST(Jwt, NonStringAlgIsInvalidNotAnException) {
  for (const std::string header : {R"({"alg":256})", R"({"alg":null})", R"({"alg":["HS256"]})"}) {
    auto result = errc::success;
    EXPECT_NO_THROW(result = check_jwt(independent_jwt("not-the-token", header, "{}"))) << header;
    EXPECT_EQ(result, errc::bad_credentials) << header;
  }
}

TEST(Jwt, ExpiryIsEnforced) {
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, with_time("exp", kNow - 1))), errc::bad_credentials);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, with_time("exp", kNow - 3600))),
            errc::bad_credentials);
  // RFC 7519: "on or after" the expiry it must not be accepted.
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, with_time("exp", kNow))), errc::bad_credentials);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, with_time("exp", kNow + 1))), errc::success);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, with_time("exp", kNow + 3600))), errc::success);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, R"({"exp":"9999999999"})")), errc::bad_credentials);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, R"({"exp":null})")), errc::bad_credentials);
}

TEST(Jwt, NotBeforeIsEnforced) {
  const auto nbf = [](std::int64_t at) { return live(R"("nbf":)" + std::to_string(at)); };
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, nbf(kNow + 1))), errc::bad_credentials);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, nbf(kNow + 3600))), errc::bad_credentials);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, nbf(kNow))), errc::success);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, nbf(kNow - 60))), errc::success);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, live(R"("nbf":"0")"))), errc::bad_credentials);
  const auto window =
      R"({"nbf":)" + std::to_string(kNow - 10) + R"(,"exp":)" + std::to_string(kNow + 10) + "}";
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, window)), errc::success);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, window), kNow + 10), errc::bad_credentials);
  EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, window), kNow - 11), errc::bad_credentials);
}

TEST(Jwt, PayloadMustBeAJsonObject) {
  for (const std::string payload : {"[]", R"("ops")", "42", "not json", ""}) {
    EXPECT_EQ(check_jwt(sign_jwt_hs256(kToken, payload)), errc::bad_credentials) << payload;
  }
}

TEST(Jwt, GarbageAndWrongSegmentCountsAreInvalid) {
  const auto parts = split(kShellJwt);
  for (const auto& credential : std::vector<std::string>{
           std::string("a.b.c"), std::string("!!!.@@@.###"), std::string(".."), std::string("..."),
           std::string("a"), parts.header + "." + parts.payload,
           parts.header + "." + parts.payload + "." + parts.signature + "." + parts.signature,
           kShellJwt + ".", "." + kShellJwt, parts.header + ".." + parts.signature,
           parts.header + "=." + parts.payload + "." + parts.signature,
           parts.header + "." + parts.payload + "." + parts.signature + "=",
           parts.header + "." + parts.payload + ".+" + parts.signature.substr(1)}) {
    EXPECT_EQ(check_jwt(credential), errc::bad_credentials) << credential;
  }
}

// ---- base64url ----------------------------------------------------------------------------

TEST(Base64Url, Rfc4648VectorsForLengthsZeroToFive) {
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},         {"foo", "Zm9v"},
      {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64url_encode(plain), encoded) << plain;
    std::string decoded = "stale";
    ASSERT_TRUE(base64url_decode(encoded, &decoded)) << encoded;
    EXPECT_EQ(decoded, plain) << encoded;
  }
}

TEST(Base64Url, UsesTheUrlAlphabetWithoutPadding) {
  // Standard base64 of fb ff bf is "+/+/": the url alphabet replaces + and /.
  EXPECT_EQ(base64url_encode("\xfb\xff\xbf"), "-_-_");
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
  EXPECT_EQ(base64url_encode("\xff"), "_w");
  std::string decoded;
  ASSERT_TRUE(base64url_decode("-_-_", &decoded));
  EXPECT_EQ(decoded, "\xfb\xff\xbf");
}

TEST(Base64Url, RoundTripsEveryByteAndLengthsZeroToFive) {
  std::string all;
  for (int b = 0; b < 256; ++b) {
    all.push_back(static_cast<char>(b));
  }
  for (std::size_t length = 0; length <= 5; ++length) {
    for (std::size_t start = 0; start + length <= all.size(); start += 7) {
      const auto plain = all.substr(start, length);
      const auto encoded = base64url_encode(plain);
      EXPECT_EQ(encoded, independent_b64url(plain));
      EXPECT_EQ(encoded.size(), (length * 4 + 2) / 3);
      EXPECT_EQ(encoded.find_first_of("+/="), std::string::npos) << encoded;
      std::string decoded;
      ASSERT_TRUE(base64url_decode(encoded, &decoded)) << encoded;
      EXPECT_EQ(decoded, plain);
    }
  }
  std::string decoded;
  ASSERT_TRUE(base64url_decode(base64url_encode(all), &decoded));
  EXPECT_EQ(decoded, all);
}

TEST(Base64Url, CharactersOutsideTheAlphabetAreRejected) {
  const std::vector<std::string> texts = {"Zm9v+",
                                          "Zm9v/",
                                          "Zm8=",
                                          "Zg==",
                                          "Zm 9v",
                                          "Zm9v\n",
                                          "Zm.9v",
                                          "Zm9v\xc3\xa9",
                                          "Zm9v%2",
                                          "Zm9v!",
                                          std::string("Zm\0v", 4)};
  for (const auto& text : texts) {
    std::string decoded;
    EXPECT_FALSE(base64url_decode(text, &decoded)) << text;
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::http

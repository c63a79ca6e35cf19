// libFuzzer target: the gateways' bills (SPEC §13) — hostile bytes at the bounded inflate, the zip
// reader, the WeChat Pay and Alipay bill readers line by line, the Stripe bill's pages, and the
// WeChat Pay and Alipay dialects' download answers behind a first answer the harness signs itself.
// Input: a mode byte, a limits byte (fuzz_bill_checks.hpp), then the payload.
#include <string>

#include "channels/alipay/alipay_bill.hpp"
#include "channels/alipay/alipay_bill_reader.hpp"
#include "channels/bill_lines.hpp"
#include "channels/stripe/stripe_bill.hpp"
#include "channels/wechat/wechat_bill.hpp"
#include "channels/wechat/wechat_bill_reader.hpp"
#include "codec/inflate.hpp"
#include "codec/text.hpp"
#include "codec/zip_reader.hpp"
#include "fuzz_bill_checks.hpp"
#include "fuzz_support.hpp"
#include "support/bill_files.hpp"

namespace {

using namespace seatflow;
using fuzz::BillInput;
using fuzz::require;

// The output limit of the second, generous run each bounded inflate is compared with.
constexpr std::size_t kWideBytesMax = std::size_t{1} << 20;
// The zip entries extracted from one archive.
constexpr std::size_t kZipEntriesTried = 4;

// One bounded inflate: its status, what it handed on, and whether the sink was ever called.
struct Inflated {
  codec::InflateStatus status = codec::InflateStatus::ok;
  std::string out;
  std::uint32_t crc = 0;
};

using InflateFn = codec::InflateStatus (*)(std::string_view, std::size_t, const codec::ChunkSink&,
                                           std::uint32_t*);

codec::InflateStatus gunzip_with_crc(std::string_view in, std::size_t bytes_max,
                                     const codec::ChunkSink& out, std::uint32_t* /*crc*/) {
  return codec::gunzip(in, bytes_max, out);
}

Inflated run_inflate(InflateFn inflate, std::string_view in, std::size_t bytes_max) {
  Inflated result;
  result.status = inflate(
      in, bytes_max,
      [&](std::string_view chunk) {
        require(!chunk.empty() && chunk.size() <= codec::kInflateChunkBytes, "a chunk's size");
        result.out.append(chunk);
        return true;
      },
      &result.crc);
  require(result.out.size() <= bytes_max, "an inflate passed its limit");
  return result;
}

// (1) gunzip or inflate_raw under a small limit, held against a generous run of the same bytes:
// the same steps until the small limit is reached, a sink that stops is obeyed, a whole stream
// is no longer whole without its last byte.
void fuzz_inflate(const BillInput& input, InflateFn inflate, bool raw) {
  const auto small = run_inflate(inflate, input.payload, input.limits.bytes_max);
  const auto wide = run_inflate(inflate, input.payload, kWideBytesMax);
  require(wide.out.starts_with(small.out),
          "a bounded inflate's output is not the wide one's start");
  if (small.status == codec::InflateStatus::too_large) {
    require(
        wide.status == codec::InflateStatus::too_large || wide.out.size() > input.limits.bytes_max,
        "too_large below the limit");
  } else {
    require(small.status == wide.status && small.out == wide.out,
            "the limit changed an inflate it was not reached in");
  }
  if (raw) {
    require(small.crc == codec::crc32_of(small.out), "inflate_raw's CRC-32 is not its output's");
  }
  if (small.status == codec::InflateStatus::ok && !input.payload.empty()) {
    const auto cut = run_inflate(inflate, input.payload.substr(0, input.payload.size() - 1),
                                 input.limits.bytes_max);
    require(cut.status != codec::InflateStatus::ok, "a stream whole without its last byte");
  }
  bool called = false;
  const auto stopped = inflate(
      input.payload, input.limits.bytes_max,
      [&](std::string_view) {
        called = true;
        return false;
      },
      nullptr);
  require(called == (stopped == codec::InflateStatus::stopped), "a stopping sink not obeyed");
}

// (2) zip_entries and zip_extract: bounded, a whole entry agrees with its directory record, a
// checksum status means it does not; then the Alipay bill rows over the archive as downloaded.
void fuzz_zip(const BillInput& input) {
  const auto entries = codec::zip_entries(input.payload);
  if (!entries.ok()) {
    require(entries.error() == codec::errc::bad_archive && !entries.detail().empty() &&
                entries.detail().size() < 128,
            "a zip refused without a short reason");
  } else {
    const auto& listed = entries.value();
    require(listed.size() <= codec::kZipEntriesMax, "more zip entries than the limit");
    for (std::size_t i = 0; i < listed.size() && i < kZipEntriesTried; ++i) {
      const auto& entry = listed[i];
      std::string out;
      const auto status =
          codec::zip_extract(input.payload, entry, input.limits.bytes_max, [&](std::string_view c) {
            out.append(c);
            return true;
          });
      require(out.size() <= input.limits.bytes_max, "a zip entry passed its limit");
      const bool agrees =
          out.size() == entry.uncompressed_bytes && codec::crc32_of(out) == entry.crc32;
      if (status == codec::InflateStatus::ok) {
        require(agrees, "a whole zip entry that disagrees with its directory record");
      } else if (status == codec::InflateStatus::checksum) {
        require(
            !agrees || (entry.method == 0 && entry.compressed_bytes != entry.uncompressed_bytes),
            "a checksum status for an entry that agrees");
      }
    }
  }
  fuzz::CheckingSink sink(fuzz::BillIds::gateway_and_ours, input);
  const auto rows = channels::alipay_bill_rows(input.payload, input.limits, sink);
  fuzz::check_bill_result(rows);
  if (rows.ok()) {
    fuzz::check_bill_summary(rows.value(), sink);
  }
}

// The payload handed on as an inflate would, in chunks of the chosen size.
channels::BillInflate chunked(std::string_view payload, std::size_t chunk_bytes) {
  return [payload, chunk_bytes](const codec::ChunkSink& out) {
    for (std::size_t at = 0; at < payload.size(); at += chunk_bytes) {
      if (!out(payload.substr(at, chunk_bytes))) {
        return codec::InflateStatus::stopped;
      }
    }
    return codec::InflateStatus::ok;
  };
}

// What a line reader's run must come to: the digests are the payload's, however it was cut; a
// refusal by the sink ends the read with that refusal.
void check_line_read(const BillInput& input, const channels::Result<channels::BillDigests>& read,
                     const channels::Result<void>& finished, const fuzz::CheckingSink& sink) {
  fuzz::check_bill_result(read);
  if (read.ok()) {
    require(read.value().sha256 == fuzz::sha256_hex(input.payload), "SHA-256 depends on chunks");
    require(!input.flag_b || read.value().sha1 == fuzz::sha1_hex(input.payload),
            "SHA-1 depends on chunks");
    fuzz::check_bill_result(finished);
  }
  if (sink.offered() != sink.taken()) {
    require(!read.ok() && read.detail() == fuzz::kSinkRefusal, "a sink refusal was not the end");
  }
}

// (3) The WeChat Pay trade bill reader over the payload's lines.
void fuzz_wechat_reader(const BillInput& input) {
  fuzz::CheckingSink sink(fuzz::BillIds::gateway_and_ours, input);
  channels::WechatBillReader reader(input.limits, sink);
  const auto read =
      channels::read_bill_lines("fuzz", chunked(input.payload, input.chunk_bytes), input.flag_b,
                                [&](std::string_view line) { return reader.line(line); });
  const channels::Result<void> finished = read.ok() ? reader.finish() : channels::Result<void>{};
  check_line_read(input, read, finished, sink);
  require(reader.rows_given() == sink.taken(), "rows_given is not what the sink took");
}

// (4) The Alipay trade bill reader over the payload's lines, GBK lines converted as the dialect
// converts them (flag a), or UTF-8 lines as they are.
void fuzz_alipay_reader(const BillInput& input) {
  fuzz::CheckingSink sink(fuzz::BillIds::gateway_and_ours, input);
  channels::AlipayBillReader reader(input.limits, sink);
  const auto read =
      channels::read_bill_lines("fuzz", chunked(input.payload, input.chunk_bytes), input.flag_b,
                                [&](std::string_view line) -> channels::Result<void> {
                                  if (!input.flag_a) {
                                    return reader.line(line);
                                  }
                                  const auto utf8 = codec::gbk_to_utf8(line);
                                  if (!utf8) {
                                    return channels::rejected_answer("not GBK");
                                  }
                                  return reader.line(*utf8);
                                });
  const channels::Result<void> finished = read.ok() ? reader.finish() : channels::Result<void>{};
  check_line_read(input, read, finished, sink);
  require(reader.rows_given() == sink.taken(), "rows_given is not what the sink took");
}

const channels::StripeBill& stripe_bill() {
  static const channels::StripeBill instance(
      channels::StripeApiConfig{"sk_test_fuzz", fuzz::url_of("https://api.stripe.test"), "cny"});
  return instance;
}

// (5) The Stripe bill's step() over pages: the payload cut at NUL bytes, each piece the next
// page's body (flag a: the first answered 402, an error body).
void fuzz_stripe(const BillInput& input) {
  fuzz::CheckingSink sink(fuzz::BillIds::trade_only, input);
  channels::BillCursor cursor;
  std::string_view rest = input.payload;
  for (int page = 0;; ++page) {
    const auto cut = rest.find('\0');
    net::Response response;
    response.status = page == 0 && input.flag_a ? 402 : 200;
    response.body = std::string(rest.substr(0, cut));
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
    const auto step =
        stripe_bill().step(fuzz::kBillDay, input.limits, cursor, response, sink, fuzz::kNowMs);
    fuzz::check_bill_result(step);
    require(cursor.rows <= input.limits.rows_max && cursor.rows <= sink.taken(),
            "the cursor counts rows the sink did not take");
    if (!step.ok()) {
      require(sink.offered() == sink.taken() || step.detail() == fuzz::kSinkRefusal,
              "a sink refusal was not the end");
      return;
    }
    require(sink.offered() == sink.taken(), "a step went on past a sink refusal");
    if (step.value().kind == channels::BillStep::Kind::done) {
      fuzz::check_bill_summary(step.value().summary, sink);
      return;
    }
    require(step.value().kind == channels::BillStep::Kind::next && step.value().next,
            "a Stripe page neither done nor next");
    require(step.value().next->url.target.find("starting_after=") != std::string::npos,
            "a next page that does not start after the last");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = fuzz::read_bill_input(fuzz::as_text(data, size));
  if (!input) {
    return 0;
  }
  switch (input->mode) {
    case 0:
      fuzz_inflate(*input, gunzip_with_crc, false);
      break;
    case 1:
      fuzz_inflate(*input, codec::inflate_raw, true);
      break;
    case 2:
      fuzz_zip(*input);
      break;
    case 3:
      fuzz_wechat_reader(*input);
      break;
    case 4:
      fuzz_alipay_reader(*input);
      break;
    case 5:
      fuzz_stripe(*input);
      break;
    case 6:
      fuzz::fuzz_wechat_download(*input);
      break;
    default:
      fuzz::fuzz_alipay_download(*input);
      break;
  }
  return 0;
}

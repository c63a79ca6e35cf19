// The obs-fold scan of a request's header section (wire::HeaderScan), fed as a socket delivers:
// in pieces, with the parser taking the request line off the front.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "http/request_reader.hpp"

namespace seatflow::http::wire {
namespace {
namespace SEATFLOW_UNITY_ID {

using State = HeaderScan::State;

// Feeds `bytes` in pieces of `piece` bytes, as reads that append to a buffer.
State scan_in_pieces(std::string_view bytes, std::size_t piece) {
  HeaderScan scan;
  State state = State::reading;
  for (std::size_t end = piece; state == State::reading; end += piece) {
    state = scan.scan(bytes.substr(0, std::min(end, bytes.size())));
    if (end >= bytes.size()) {
      break;
    }
  }
  return state;
}

TEST(HeaderScanTest, AFoldAnywhereInTheHeaderSectionIsFoundInAnyPieces) {
  const std::string plain = "POST /n HTTP/1.1\r\nHost: t\r\nX-A: 1\r\n\r\n folded body";
  const std::string folded =
      "POST /n HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: a\r\n chunked\r\n\r\n";
  const std::string tab = "GET / HTTP/1.1\r\nHost: t\r\nX: a\r\n\tb\r\n\r\n";
  const std::string after_line = "GET / HTTP/1.1\r\n X: a\r\nHost: t\r\n\r\n";
  for (std::size_t piece = 1; piece <= 70; ++piece) {
    EXPECT_EQ(scan_in_pieces(plain, piece), State::complete) << piece;
    EXPECT_EQ(scan_in_pieces(folded, piece), State::folded) << piece;
    EXPECT_EQ(scan_in_pieces(tab, piece), State::folded) << piece;
    EXPECT_EQ(scan_in_pieces(after_line, piece), State::folded) << piece;
  }
  EXPECT_EQ(scan_in_pieces("GET / HTTP/1.1\r\nHost: t\r\n", 100), State::reading);
}

TEST(HeaderScanTest, BytesTakenOffTheFrontKeepTheScanInPlace) {
  // The parser takes the request line as soon as it is whole; the fold's space arrives later.
  HeaderScan scan;
  std::string buffer = "POST /n HTTP/1.1\r\n";
  EXPECT_EQ(scan.scan(buffer), State::reading);
  scan.consumed(buffer.size());
  buffer = " folded: 1\r\n\r\n";
  EXPECT_EQ(scan.scan(buffer), State::folded);

  HeaderScan clean;
  buffer = "POST /n HTTP/1.1\r\nHo";
  EXPECT_EQ(clean.scan(buffer), State::reading);
  clean.consumed(18);  // the request line
  buffer = "Host: t\r\n";
  EXPECT_EQ(clean.scan(buffer), State::reading);
  buffer += "\r\nbody";
  EXPECT_EQ(clean.scan(buffer), State::complete);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::http::wire

// Bounded streaming decompression for gateway bills (SPEC §13): gzip (WeChat Pay) and a zip
// entry's raw deflate (Alipay) through zlib, the output handed on in chunks and never more than a
// limit in all, so a small body that inflates without end (a zip bomb) stops at the limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

namespace seatflow::codec {

// How a bounded inflate ended.
enum class InflateStatus : std::uint8_t {
  ok,         // the whole stream, every checksum verified
  malformed,  // not a gzip/deflate stream, or corrupt data
  truncated,  // the input ended before the stream did
  too_large,  // the output would pass the limit: stopped there
  checksum,   // the data decompressed but its CRC-32 or length does not agree
  stopped,    // the chunk sink asked to stop
};

// A short log-safe name ("truncated", ...).
[[nodiscard]] std::string_view to_string(InflateStatus status);

// Receives each piece of the output in order; false stops the inflate (InflateStatus::stopped).
using ChunkSink = std::function<bool(std::string_view chunk)>;

// The most a chunk handed to a ChunkSink holds.
inline constexpr std::size_t kInflateChunkBytes = 64 * 1024;

// A gzip file (RFC 1952; several members one after another are one file, as `gzip -c a b`
// writes them): its uncompressed bytes to `out`, at most `bytes_max` in all. Each member's CRC-32
// and length are checked by zlib.
[[nodiscard]] InflateStatus gunzip(std::string_view gz, std::size_t bytes_max,
                                   const ChunkSink& out);

// Raw deflate (RFC 1951, a zip entry's method 8): its bytes to `out`, at most `bytes_max` in all.
// The whole input must be the one deflate stream (trailing bytes are malformed). `crc32` receives
// the CRC-32 of the output.
[[nodiscard]] InflateStatus inflate_raw(std::string_view deflated, std::size_t bytes_max,
                                        const ChunkSink& out, std::uint32_t* crc32);

// The CRC-32 (zlib's, as gzip and zip use) of `bytes` continued from `crc` (0 to start).
[[nodiscard]] std::uint32_t crc32_of(std::string_view bytes, std::uint32_t crc = 0);

}  // namespace seatflow::codec

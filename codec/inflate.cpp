// gzip and raw deflate through zlib's inflate, bounded and streamed (see the header).
#include "codec/inflate.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

namespace seatflow::codec {
namespace {

// zlib counts input in uInt: the input is fed in slices of at most this many bytes.
constexpr std::size_t kInflateSliceBytes = std::size_t{1} << 20;
// inflateInit2's window bits: 15 plus 16 reads a gzip wrapper, minus 15 raw deflate.
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kRawWindowBits = -15;

// One z_stream, ended on every path.
class ZStream {
 public:
  explicit ZStream(int window_bits) { ok_ = inflateInit2(&stream_, window_bits) == Z_OK; }
  ~ZStream() {
    if (ok_) {
      inflateEnd(&stream_);
    }
  }
  ZStream(const ZStream&) = delete;
  ZStream& operator=(const ZStream&) = delete;

  [[nodiscard]] bool ok() const { return ok_; }
  z_stream& get() { return stream_; }

 private:
  z_stream stream_{};
  bool ok_ = false;
};

// zlib's message for a gzip trailer that does not agree with the data.
bool is_checksum_error(const z_stream& stream) {
  return stream.msg != nullptr && (std::strcmp(stream.msg, "incorrect data check") == 0 ||
                                   std::strcmp(stream.msg, "incorrect length check") == 0);
}

struct Feed {
  std::string_view input;
  std::size_t fed = 0;  // bytes of `input` handed to zlib so far

  void refill(z_stream& stream) {
    if (stream.avail_in == 0 && fed < input.size()) {
      const std::size_t slice = std::min(kInflateSliceBytes, input.size() - fed);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data() + fed));
      stream.avail_in = static_cast<uInt>(slice);
      fed += slice;
    }
  }
  [[nodiscard]] std::size_t left(const z_stream& stream) const {
    return input.size() - fed + stream.avail_in;
  }
};

// The inflate loop shared by both formats; `gzip` allows further members after the first.
InflateStatus run(ZStream& zs, std::string_view input, bool gzip, std::size_t bytes_max,
                  const ChunkSink& out, std::uint32_t* crc) {
  if (!zs.ok()) {
    return InflateStatus::malformed;
  }
  z_stream& stream = zs.get();
  std::string buffer(kInflateChunkBytes, '\0');
  Feed feed{input};
  std::size_t total = 0;
  for (;;) {
    feed.refill(stream);
    stream.next_out = reinterpret_cast<Bytef*>(buffer.data());
    stream.avail_out = static_cast<uInt>(buffer.size());
    const int rc = inflate(&stream, Z_NO_FLUSH);
    const std::size_t produced = buffer.size() - stream.avail_out;
    if (produced > 0) {
      if (produced > bytes_max - total) {
        return InflateStatus::too_large;
      }
      total += produced;
      const std::string_view chunk(buffer.data(), produced);
      if (crc != nullptr) {
        *crc = crc32_of(chunk, *crc);
      }
      if (!out(chunk)) {
        return InflateStatus::stopped;
      }
    }
    if (rc == Z_STREAM_END) {
      if (feed.left(stream) == 0) {
        return InflateStatus::ok;
      }
      if (!gzip || inflateReset(&stream) != Z_OK) {
        return InflateStatus::malformed;
      }
      continue;
    }
    if (rc == Z_DATA_ERROR) {
      return is_checksum_error(stream) ? InflateStatus::checksum : InflateStatus::malformed;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return InflateStatus::malformed;
    }
    if (produced == 0 && feed.left(stream) == 0) {
      return InflateStatus::truncated;
    }
    if (rc == Z_BUF_ERROR && produced == 0) {
      return InflateStatus::malformed;  // input left and room for output, yet no progress
    }
  }
}

}  // namespace

std::string_view to_string(InflateStatus status) {
  switch (status) {
    case InflateStatus::ok:
      return "ok";
    case InflateStatus::malformed:
      return "malformed";
    case InflateStatus::truncated:
      return "truncated";
    case InflateStatus::too_large:
      return "over the size limit";
    case InflateStatus::checksum:
      return "checksum mismatch";
    case InflateStatus::stopped:
      return "stopped";
  }
  return "?";
}

InflateStatus gunzip(std::string_view gz, std::size_t bytes_max, const ChunkSink& out) {
  ZStream stream(kGzipWindowBits);
  return run(stream, gz, true, bytes_max, out, nullptr);
}

InflateStatus inflate_raw(std::string_view deflated, std::size_t bytes_max, const ChunkSink& out,
                          std::uint32_t* crc32) {
  ZStream stream(kRawWindowBits);
  std::uint32_t crc = 0;
  const auto status = run(stream, deflated, false, bytes_max, out, &crc);
  if (crc32 != nullptr) {
    *crc32 = crc;
  }
  return status;
}

std::uint32_t crc32_of(std::string_view bytes, std::uint32_t crc) {
  uLong value = crc;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const std::size_t slice = std::min(kInflateSliceBytes, bytes.size() - done);
    value =
        crc32(value, reinterpret_cast<const Bytef*>(bytes.data() + done), static_cast<uInt>(slice));
    done += slice;
  }
  return static_cast<std::uint32_t>(value);
}

}  // namespace seatflow::codec

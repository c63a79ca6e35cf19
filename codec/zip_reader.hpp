// A minimal zip reader for gateway bills (SPEC §13, Alipay's daily bill is a zip): the central
// directory (PKWARE APPNOTE 6.3.x §4.3.12-16, one disk, no ZIP64, no encryption) and one entry's
// bytes, stored or deflated, CRC-32 checked and bounded. Pure: it reads the archive from memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/errc.hpp"
#include "codec/inflate.hpp"

namespace seatflow::codec {

// One entry as the central directory describes it.
struct ZipEntry {
  std::string name;        // raw bytes: UTF-8 when utf8_name, else the archiver's code page
  bool utf8_name = false;  // general purpose flag bit 11
  std::uint16_t flags = 0;
  std::uint16_t method = 0;  // 0 stored, 8 deflated
  std::uint32_t crc32 = 0;
  std::uint32_t compressed_bytes = 0;
  std::uint32_t uncompressed_bytes = 0;
  std::uint32_t local_offset = 0;  // of its local file header
};

// More entries than this make an archive malformed: a bill zip holds two or three files.
inline constexpr std::size_t kZipEntriesMax = 256;

// The entries of `archive`; errc::bad_archive with a log-safe reason when it is not a zip this
// reader takes (no end of central directory record, several disks, ZIP64, a directory that runs
// past the archive or does not parse, more than kZipEntriesMax entries).
[[nodiscard]] Result<std::vector<ZipEntry>> zip_entries(std::string_view archive);

// The bytes of `entry` (from zip_entries of the same archive) to `out`, at most `bytes_max` in
// all: its local header checked, stored (0) or deflated (8) data inflated, its length and CRC-32
// compared with the directory's (InflateStatus::checksum when they differ). An encrypted entry,
// another method or data that runs past the archive is InflateStatus::malformed.
[[nodiscard]] InflateStatus zip_extract(std::string_view archive, const ZipEntry& entry,
                                        std::size_t bytes_max, const ChunkSink& out);

}  // namespace seatflow::codec

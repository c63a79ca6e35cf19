// The zip central directory and one entry's bytes (see the header).
#include "codec/zip_reader.hpp"

#include <algorithm>

namespace seatflow::codec {
namespace {

constexpr std::uint32_t kEndOfDirectorySignature = 0x06054b50;
constexpr std::uint32_t kDirectoryEntrySignature = 0x02014b50;
constexpr std::uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr std::size_t kEndOfDirectoryBytes = 22;
constexpr std::size_t kDirectoryEntryBytes = 46;
constexpr std::size_t kLocalHeaderBytes = 30;
constexpr std::size_t kCommentBytesMax = 0xFFFF;
constexpr std::uint16_t kFlagEncrypted = 0x0001;
constexpr std::uint16_t kFlagUtf8Name = 0x0800;
constexpr std::uint16_t kMethodStored = 0;
constexpr std::uint16_t kMethodDeflated = 8;
constexpr std::uint32_t kZip64Marker = 0xFFFFFFFF;

std::uint16_t u16(std::string_view bytes, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(bytes[at]) |
                                    (static_cast<unsigned char>(bytes[at + 1]) << 8U));
}

std::uint32_t u32(std::string_view bytes, std::size_t at) {
  return static_cast<std::uint32_t>(u16(bytes, at)) |
         (static_cast<std::uint32_t>(u16(bytes, at + 2)) << 16U);
}

// The end of central directory record: the last signature whose comment reaches the end exactly.
std::optional<std::size_t> find_end_of_directory(std::string_view archive) {
  if (archive.size() < kEndOfDirectoryBytes) {
    return std::nullopt;
  }
  const std::size_t last = archive.size() - kEndOfDirectoryBytes;
  const std::size_t first = last > kCommentBytesMax ? last - kCommentBytesMax : 0;
  for (std::size_t at = last + 1; at-- > first;) {
    if (u32(archive, at) == kEndOfDirectorySignature &&
        at + kEndOfDirectoryBytes + u16(archive, at + 20) == archive.size()) {
      return at;
    }
  }
  return std::nullopt;
}

// One central directory entry at `at`; its size in `consumed`.
std::optional<ZipEntry> read_directory_entry(std::string_view archive, std::size_t at,
                                             std::size_t end, std::size_t* consumed) {
  if (end - at < kDirectoryEntryBytes || u32(archive, at) != kDirectoryEntrySignature) {
    return std::nullopt;
  }
  const std::size_t name_bytes = u16(archive, at + 28);
  const std::size_t rest = name_bytes + u16(archive, at + 30) + u16(archive, at + 32);
  if (end - at - kDirectoryEntryBytes < rest) {
    return std::nullopt;
  }
  ZipEntry entry;
  entry.flags = u16(archive, at + 8);
  entry.utf8_name = (entry.flags & kFlagUtf8Name) != 0;
  entry.method = u16(archive, at + 10);
  entry.crc32 = u32(archive, at + 16);
  entry.compressed_bytes = u32(archive, at + 20);
  entry.uncompressed_bytes = u32(archive, at + 24);
  entry.local_offset = u32(archive, at + 42);
  entry.name = std::string(archive.substr(at + kDirectoryEntryBytes, name_bytes));
  *consumed = kDirectoryEntryBytes + rest;
  return entry;
}

bool is_zip64(const ZipEntry& entry) {
  return entry.compressed_bytes == kZip64Marker || entry.uncompressed_bytes == kZip64Marker ||
         entry.local_offset == kZip64Marker;
}

// Where the entry's data starts, after its local header; nullopt when the header is not there.
std::optional<std::size_t> data_offset(std::string_view archive, const ZipEntry& entry) {
  const std::size_t at = entry.local_offset;
  if (at > archive.size() || archive.size() - at < kLocalHeaderBytes ||
      u32(archive, at) != kLocalHeaderSignature) {
    return std::nullopt;
  }
  const std::size_t start = at + kLocalHeaderBytes + u16(archive, at + 26) + u16(archive, at + 28);
  if (start > archive.size() || archive.size() - start < entry.compressed_bytes) {
    return std::nullopt;
  }
  return start;
}

}  // namespace

Result<std::vector<ZipEntry>> zip_entries(std::string_view archive) {
  const auto eocd = find_end_of_directory(archive);
  if (!eocd) {
    return refused(errc::bad_archive, "no end of central directory record");
  }
  const std::size_t count = u16(archive, *eocd + 10);
  const std::size_t directory_bytes = u32(archive, *eocd + 12);
  const std::size_t directory_at = u32(archive, *eocd + 16);
  if (u16(archive, *eocd + 4) != 0 || u16(archive, *eocd + 6) != 0 ||
      count != u16(archive, *eocd + 8)) {
    return refused(errc::bad_archive, "a zip of several disks");
  }
  if (count > kZipEntriesMax || directory_at > *eocd || *eocd - directory_at < directory_bytes) {
    return refused(errc::bad_archive,
                   "too many entries, ZIP64, or a central directory outside the archive");
  }
  std::vector<ZipEntry> entries;
  std::size_t at = directory_at;
  const std::size_t end = directory_at + directory_bytes;
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t consumed = 0;
    auto entry = read_directory_entry(archive, at, end, &consumed);
    if (!entry || is_zip64(*entry)) {
      return refused(errc::bad_archive, "a central directory entry that does not parse, or ZIP64");
    }
    entries.push_back(std::move(*entry));
    at += consumed;
  }
  return entries;
}

InflateStatus zip_extract(std::string_view archive, const ZipEntry& entry, std::size_t bytes_max,
                          const ChunkSink& out) {
  const auto start = data_offset(archive, entry);
  if (!start || (entry.flags & kFlagEncrypted) != 0) {
    return InflateStatus::malformed;
  }
  const std::string_view data = archive.substr(*start, entry.compressed_bytes);
  std::uint32_t crc = 0;
  std::size_t total = 0;
  const ChunkSink counted = [&](std::string_view chunk) {
    total += chunk.size();
    return out(chunk);
  };
  if (entry.method == kMethodDeflated) {
    const auto status = inflate_raw(data, bytes_max, counted, &crc);
    if (status != InflateStatus::ok) {
      return status;
    }
  } else if (entry.method == kMethodStored) {
    if (data.size() != entry.uncompressed_bytes) {
      return InflateStatus::checksum;
    }
    for (std::size_t done = 0; done < data.size(); done += kInflateChunkBytes) {
      const auto chunk = data.substr(done, kInflateChunkBytes);
      if (chunk.size() > bytes_max - total) {
        return InflateStatus::too_large;
      }
      crc = crc32_of(chunk, crc);
      if (!counted(chunk)) {
        return InflateStatus::stopped;
      }
    }
  } else {
    return InflateStatus::malformed;
  }
  return total == entry.uncompressed_bytes && crc == entry.crc32 ? InflateStatus::ok
                                                                 : InflateStatus::checksum;
}

}  // namespace seatflow::codec

// Builds the move-plus-event statements of the outbox and decodes the slot's pgoutput rows.
#include "persistence/stores/events.hpp"

#include <array>
#include <cctype>
#include <charconv>

#include <nlohmann/json.hpp>

#include "codec/json_members.hpp"

namespace seatflow::persistence::events {

namespace {

// The event columns of the rows of `cte`, moved by a move of `type`.
std::string event_rows(std::string_view cte, std::string_view type) {
  std::string sql = "SELECT '";
  sql.append(type);
  sql.append(":' || ");
  sql.append(cte);
  sql.append(".event_key AS event_id, '");
  sql.append(type);
  sql.append("' AS type, ");
  for (const auto* column : {"payment_no", "order_no", "amount_cents", "detail"}) {
    sql.append(cte);
    sql.push_back('.');
    sql.append(column);
    sql.append(", ");
  }
  sql.append(
      "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') AS occurred_at "
      "FROM ");
  sql.append(cte);
  return sql;
}

// emitted AS (…): one message with the events of `rows` (a query of event columns), and one row
// when there was any.
std::string emitted(std::string_view rows) {
  // json_agg of a row writes its columns as the object's members, at about two thirds of the
  // cost of json_build_object per row.
  // seatflow_emit_events (migrations 11, 12) is pg_logical_emit_message(true, kMessagePrefix, …)
  // behind a guard: it raises kSqlStateEventSlotUnusable when the slot that would decode the
  // message is missing, invalidated or still being created, so no move commits with an event no
  // one can read.
  std::string sql = "emitted AS (SELECT seatflow_emit_events(json_agg(e)::text) AS lsn FROM (";
  sql.append(rows);
  sql.append(") AS e HAVING count(*) > 0)");
  return sql;
}

}  // namespace

std::string with_event(std::string_view move, std::string_view type,
                       std::string_view result_columns) {
  std::string sql = "WITH moved AS (";
  sql.append(move);
  sql.append("), ");
  sql.append(emitted(event_rows("moved", type)));
  sql.append(" SELECT ");
  sql.append(result_columns);
  sql.append(" FROM moved CROSS JOIN emitted");
  return sql;
}

std::string with_events(const std::vector<EventMove>& moves) {
  std::string sql = "WITH ";
  std::string rows;
  std::string counts;
  for (std::size_t k = 0; k < moves.size(); ++k) {
    const auto cte = "moved_" + std::to_string(k + 1);
    sql.append(cte);
    sql.append(" AS (");
    sql.append(moves[k].move);
    sql.append("), ");
    rows.append(k == 0 ? "" : " UNION ALL ");
    rows.append(event_rows(cte, moves[k].type));
    counts.append(k == 0 ? "" : ", ");
    counts.append("(SELECT count(*) FROM " + cte + ")");
  }
  sql.append(emitted(rows));
  sql.append(" SELECT ");
  sql.append(counts);
  sql.append(" FROM emitted");
  return sql;
}

namespace {

// A big-endian reader over one pgoutput row; every read fails once the bytes run out.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool u8(std::uint8_t& out) {
    std::uint64_t v = 0;
    const bool ok = be(1, v);
    out = static_cast<std::uint8_t>(v);
    return ok;
  }
  bool u32(std::uint32_t& out) {
    std::uint64_t v = 0;
    const bool ok = be(4, v);
    out = static_cast<std::uint32_t>(v);
    return ok;
  }
  bool u64(std::uint64_t& out) { return be(8, out); }
  bool cstring(std::string& out) {
    const auto end = bytes_.find('\0', at_);
    if (end == std::string_view::npos) {
      return false;
    }
    out.assign(bytes_.substr(at_, end - at_));
    at_ = end + 1;
    return true;
  }
  bool raw(std::size_t n, std::string& out) {
    if (bytes_.size() - at_ < n) {
      return false;
    }
    out.assign(bytes_.substr(at_, n));
    at_ += n;
    return true;
  }
  [[nodiscard]] bool done() const { return at_ == bytes_.size(); }

 private:
  bool be(std::size_t n, std::uint64_t& out) {
    if (bytes_.size() - at_ < n) {
      return false;
    }
    out = 0;
    for (std::size_t i = 0; i < n; ++i) {
      out = (out << 8U) | static_cast<unsigned char>(bytes_[at_ + i]);
    }
    at_ += n;
    return true;
  }
  std::string_view bytes_;
  std::size_t at_ = 0;
};

}  // namespace

std::optional<WalChange> parse_pgoutput(std::string_view bytes) {
  Reader in(bytes);
  std::uint8_t tag = 0;
  if (!in.u8(tag)) {
    return std::nullopt;
  }
  WalChange change;
  std::uint64_t skip64 = 0;
  std::uint32_t skip32 = 0;
  switch (tag) {
    case 'B':  // Int64 final LSN, Int64 commit timestamp, Int32 xid
      change.kind = WalChange::Kind::begin;
      if (!in.u64(change.lsn) || !in.u64(skip64) || !in.u32(skip32) || !in.done()) {
        return std::nullopt;
      }
      return change;
    case 'C': {  // Int8 flags, Int64 commit LSN, Int64 end LSN, Int64 commit timestamp
      std::uint8_t flags = 0;
      change.kind = WalChange::Kind::commit;
      if (!in.u8(flags) || !in.u64(skip64) || !in.u64(change.lsn) || !in.u64(skip64) ||
          !in.done()) {
        return std::nullopt;
      }
      return change;
    }
    case 'M': {  // Int8 flags (1 = transactional), Int64 LSN, String prefix, Int32 n, Byte n
      std::uint8_t flags = 0;
      std::uint32_t length = 0;
      change.kind = WalChange::Kind::message;
      if (!in.u8(flags) || !in.u64(change.lsn) || !in.cstring(change.prefix) || !in.u32(length) ||
          !in.raw(length, change.content) || !in.done()) {
        return std::nullopt;
      }
      change.transactional = (flags & 1U) != 0;
      return change;
    }
    default:  // relation, type, origin …: not sent for a publication without tables
      change.kind = WalChange::Kind::other;
      return change;
  }
}

namespace {

constexpr std::array<std::string_view, 7> kStreamFields = {
    "event_id", "type", "payment_no", "order_no", "amount_cents", "detail", "occurred_at"};

// stream_fields through a parsed document: for a payload with a value that is neither a string,
// an int64 nor null (SeatFlow's statements write none), which the stream carries as JSON text.
std::optional<StreamFields> stream_fields_of_document(std::string_view payload) {
  const auto json = nlohmann::json::parse(payload, nullptr, false);
  if (!json.is_object() || !json.contains("event_id") || !json["event_id"].is_string()) {
    return std::nullopt;
  }
  StreamFields fields;
  for (const auto name : kStreamFields) {
    const auto it = json.find(name);
    if (it == json.end() || it->is_null()) {
      continue;
    }
    if (it->is_string()) {
      fields.emplace_back(name, it->get<std::string>());
    } else if (it->is_number_integer()) {
      fields.emplace_back(name, std::to_string(it->get<std::int64_t>()));
    } else {
      fields.emplace_back(name, it->dump());
    }
  }
  return fields;
}

}  // namespace

std::optional<StreamFields> stream_fields(std::string_view payload) {
  using Kind = codec::JsonMember::Kind;
  std::array<codec::JsonMember, kStreamFields.size()> members;
  if (!codec::read_json_members(payload, kStreamFields, members) ||
      members[0].kind != Kind::string) {
    return std::nullopt;
  }
  StreamFields fields;
  fields.reserve(kStreamFields.size());
  for (std::size_t i = 0; i < kStreamFields.size(); ++i) {
    auto& member = members[i];
    switch (member.kind) {
      case Kind::absent:
      case Kind::null:
        break;
      case Kind::string:
        fields.emplace_back(kStreamFields[i], std::move(member.text));
        break;
      case Kind::int64:
        fields.emplace_back(kStreamFields[i], std::to_string(member.value));
        break;
      case Kind::other:
        return stream_fields_of_document(payload);
    }
  }
  return fields;
}

std::optional<std::vector<StreamFields>> message_events(std::string_view payload) {
  std::vector<StreamFields> out;
  const auto first = payload.find_first_not_of(" \t\n\r");
  if (first == std::string_view::npos || payload[first] != '[') {
    auto fields = stream_fields(payload);
    if (!fields) {
      return std::nullopt;
    }
    out.push_back(std::move(*fields));
    return out;
  }
  const auto elements = codec::json_array_elements(payload);
  if (!elements || elements->empty()) {
    return std::nullopt;
  }
  out.reserve(elements->size());
  for (const auto element : *elements) {
    auto fields = stream_fields(element);
    if (!fields) {
      return std::nullopt;
    }
    out.push_back(std::move(*fields));
  }
  return out;
}

std::string format_lsn(std::uint64_t lsn) {
  char buffer[40];
  auto* end = std::to_chars(buffer, buffer + 20, lsn >> 32U, 16).ptr;
  *end++ = '/';
  end = std::to_chars(end, buffer + sizeof buffer, lsn & 0xFFFFFFFFU, 16).ptr;
  std::string out(buffer, end);
  for (auto& c : out) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

std::optional<std::uint64_t> parse_lsn(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 >= text.size()) {
    return std::nullopt;
  }
  std::uint64_t hi = 0;
  std::uint64_t lo = 0;
  const auto a = std::from_chars(text.data(), text.data() + slash, hi, 16);
  const auto b = std::from_chars(text.data() + slash + 1, text.data() + text.size(), lo, 16);
  if (a.ec != std::errc{} || a.ptr != text.data() + slash || b.ec != std::errc{} ||
      b.ptr != text.data() + text.size() || hi > 0xFFFFFFFFU || lo > 0xFFFFFFFFU) {
    return std::nullopt;
  }
  return (hi << 32U) | lo;
}

}  // namespace seatflow::persistence::events

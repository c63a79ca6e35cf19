// The bill reconciliation settings (SPEC §13, README "Bill reconciliation") into
// actors::BillSettings, each bounded.
#include <unistd.h>

#include <array>
#include <cctype>

#include "app/config_readers.hpp"

namespace seatflow::app::config_readers {
namespace {

// HH:MM, 00:00 to 23:59.
bool clock_time(const std::string& text) {
  const auto digit = [&text](std::size_t i) {
    return std::isdigit(static_cast<unsigned char>(text[i])) != 0;
  };
  if (text.size() != 5 || text[2] != ':' || !digit(0) || !digit(1) || !digit(3) || !digit(4)) {
    return false;
  }
  return (text[0] - '0') * 10 + (text[1] - '0') < 24 && text[3] < '6';
}

// An IANA zone name as PostgreSQL takes it (Asia/Shanghai, UTC, Etc/GMT-8); PostgreSQL checks
// that it exists when a run computes its day.
bool zone_name(const std::string& text) {
  if (text.empty() || text.size() > 64) {
    return false;
  }
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '/' && c != '_' && c != '-' &&
        c != '+') {
      return false;
    }
  }
  return true;
}

// This host's name ("" when it cannot be read).
std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) {
    return {};
  }
  return name.data();
}

}  // namespace

void read_bill(const SettingLookup& lookup, Config& config) {
  using sz = std::size_t;
  using u32 = std::uint32_t;
  auto& bill = config.engine.bill;
  bill.schedule = read_switch(lookup, "SEATFLOW_BILL_RECON", bill.schedule);
  if (const auto at = lookup("SEATFLOW_BILL_RECON_AT")) {
    if (!clock_time(*at)) {
      throw ConfigError{"SEATFLOW_BILL_RECON_AT='" + *at + "' must be HH:MM (00:00 to 23:59)"};
    }
    bill.schedule_at = *at;
  }
  if (const auto zone = lookup("SEATFLOW_BILL_TIMEZONE")) {
    if (!zone_name(*zone)) {
      throw ConfigError{"SEATFLOW_BILL_TIMEZONE='" + *zone + "' is not a time zone name"};
    }
    bill.timezone = *zone;
  }
  read_number<sz>(lookup, "SEATFLOW_BILL_BYTES_MAX", bill.limits.bytes_max, 1024,
                  net::kBillResponseBytesMax);
  read_number<sz>(lookup, "SEATFLOW_BILL_ROWS_MAX", bill.limits.rows_max, 1, 50'000'000);
  read_number<u32>(lookup, "SEATFLOW_BILL_FETCH_TIMEOUT_MS", bill.fetch_timeout_ms, 1'000,
                   net::kBillTimeoutMsMax);
  read_number<u32>(lookup, "SEATFLOW_BILL_EDGE_MS", bill.edge_ms, 0, 21'600'000);
  read_number<sz>(lookup, "SEATFLOW_BILL_REPAIRS_INFLIGHT_MAX", bill.repairs_inflight_max, 1,
                  1'024);
  read_number<u32>(lookup, "SEATFLOW_BILL_REPAIR_TIMEOUT_MS", bill.repair_timeout_ms, 100, 600'000);
  read_number<u32>(lookup, "SEATFLOW_BILL_RETRY_MS", bill.retry_ms, 60'000, 86'400'000);
  read_number<u32>(lookup, "SEATFLOW_BILL_WORK_SHARE_PCT", bill.work_share_pct, 1, 100);
  // The engine's runs are held by its host and listen address: the same engine restarted (a new
  // process) is the same holder and fails the runs it held at once (actors/bill_lease.hpp). The
  // CLI names its process instead (app/cli_bill.cpp).
  bill.holder = host_name() + " " + lookup("SEATFLOW_HTTP_ADDR").value_or("127.0.0.1:8080");
}

}  // namespace seatflow::app::config_readers

// What a duplicate-count flush writes and what it answers (persistence/stores/batch_store.hpp), in
// a header of its own so that the actors' messages can carry them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seatflow::persistence {

// Duplicates answered without the database, to be added to their log rows.
struct DuplicateCount {
  std::string callback_id;
  std::string payment_no;
  std::int64_t count = 0;
};

// A duplicate flush whose COMMIT went out and whose answer never came back (a connection cut or
// black-holed mid-commit): its counts may or may not be in the log rows. Its transaction id tells
// once PostgreSQL has finished it; adding the counts again without asking would count a
// duplicate twice.
struct DoubtfulFlush {
  std::string xid;  // pg_current_xact_id() of the flush's transaction
  std::vector<DuplicateCount> counts;
};

enum class FlushOutcome : std::uint8_t {
  committed,  // the counts are in the log rows
  failed,     // nothing was written: the caller keeps the counts for a later flush
  in_doubt,   // the commit's fate is unknown: the counts travel in `doubtful`, not with the caller
};

struct FlushResult {
  FlushOutcome outcome = FlushOutcome::failed;
  // The flushes still in doubt after this one, this one included when its commit was: to pass to
  // the next flush, which asks PostgreSQL how each ended before it writes.
  std::vector<DoubtfulFlush> doubtful;
};

}  // namespace seatflow::persistence
